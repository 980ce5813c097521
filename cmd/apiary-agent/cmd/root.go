package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/stdhive"
	"github.com/apiary-net/apiary/cells/version"
)

// New returns the apiary-agent command running a hive of cells. The
// agent's logs go to stderr.
func New(stderr io.Writer, cells ...cell.Cell) *cobra.Command {
	h := stdhive.New(hive.Options{LogOutput: stderr}, cells...)
	root := &cobra.Command{
		Use:   "apiary-agent",
		Short: "The apiary node agent",
		Long: "apiary-agent is the node agent of apiary. It runs every cell of the agent\n" +
			"and serves its REST API on --socket-path (see the apiary CLI).\n" +
			"Flags may also come from APIARY_<FLAG> environment variables and --config-dir.",
		Version:       version.Get().String(),
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return h.Run(ctx)
		},
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetErr(stderr)
	h.RegisterFlags(root.PersistentFlags())
	root.AddCommand(newHiveCommand(h), newMountBPFFSCommand())
	return root
}

func newHiveCommand(h *hive.Hive) *cobra.Command {
	hiveCmd := &cobra.Command{
		Use:   "hive",
		Short: "Print the agent's cells, their configuration and start order",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return h.Print(cmd.OutOrStdout())
		},
	}
	hiveCmd.AddCommand(&cobra.Command{
		Use:   "dot-graph",
		Short: "Print the agent's dependency graph in DOT format (render with dot -Tsvg)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return h.PrintDot(cmd.OutOrStdout())
		},
	})
	return hiveCmd
}

// Execute runs apiary-agent with args and returns the exit code: 0 after
// a clean stop, 1 when the command, start or stop failed (the error is
// written to stderr on one line).
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer, cells ...cell.Cell) int {
	root := New(stderr, cells...)
	root.SetArgs(args)
	root.SetOut(stdout)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "apiary-agent: %s\n", OneLine(err))
		return 1
	}
	return 0
}

// OneLine joins the lines of an error message (errors.Join separates
// errors with newlines) with "; ".
func OneLine(err error) string {
	lines := strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' })
	return strings.Join(lines, "; ")
}
