package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/models"
)

type statusOptions struct {
	*options
	verbose        bool
	allControllers bool
	brief          bool
	output         outputFormat
}

func newStatusCommand(global *options) *cobra.Command {
	o := &statusOptions{options: global}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the status of every subsystem of the agent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.verbose, "verbose", false, "Show every detail and the health of every module")
	f.BoolVar(&o.allControllers, "all-controllers", false, "List every controller")
	f.BoolVar(&o.brief, "brief", false, "Print one line: OK, or the failing subsystems (exit 1 when failing)")
	o.output.register(f)
	return cmd
}

func (o *statusOptions) run(cmd *cobra.Command) error {
	if err := o.output.check(); err != nil {
		return err
	}
	c := o.client()
	defer c.Close()
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	if o.output.isJSON() {
		raw, err := c.GetRaw(ctx, "/v1/status")
		if err != nil {
			return err
		}
		_, err = out.Write(raw)
		return err
	}
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	if o.brief {
		return printBrief(out, st)
	}
	printStatus(out, st, o.verbose)
	if o.allControllers {
		ctrls, err := c.Controllers(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(out)
		printControllers(out, ctrls)
	}
	if o.verbose {
		h, err := c.Hive(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(out)
		fmt.Fprintln(out, "Modules:")
		printModules(out, h, "  ")
	}
	return nil
}

// printBrief prints "OK", "OK, warnings: X, Y" or "Failure: X, Y" and
// returns an exitError(1) when something fails.
func printBrief(w io.Writer, st *models.Status) error {
	var failing, warning []string
	for _, e := range st.Entries {
		switch e.State {
		case models.StateFailure:
			failing = append(failing, e.Name)
		case models.StateWarning:
			warning = append(warning, e.Name)
		}
	}
	line := "OK"
	if len(failing) > 0 {
		line = "Failure: " + strings.Join(failing, ", ")
	}
	if len(warning) > 0 {
		line += ", warnings: " + strings.Join(warning, ", ")
	}
	fmt.Fprintln(w, line)
	if len(failing) > 0 {
		return exitError(1)
	}
	return nil
}
