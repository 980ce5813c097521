package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/models"
)

func newHiveCommand(global *options) *cobra.Command {
	return &cobra.Command{
		Use:   "hive",
		Short: "Show the health of every module of the agent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := global.client()
			defer c.Close()
			h, err := c.Hive(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Hive: %s\n\n", h.Level)
			printModules(cmd.OutOrStdout(), h, "")
			printHooks(cmd.OutOrStdout(), h)
			return nil
		},
	}
}

// printModules prints the module tree as an aligned table: name
// (indented by depth), level, age of the level and message.
func printModules(w io.Writer, h *models.Hive, indent string) {
	now := time.Now()
	tw := newTable(w)
	fmt.Fprintf(tw, "%sModule\tLevel\tSince\tMessage\n", indent)
	for _, m := range h.Modules {
		printModule(tw, now, m, indent)
	}
	for _, s := range h.Scopes {
		printScope(tw, now, s, indent)
	}
	tw.Flush()
}

func printModule(w io.Writer, now time.Time, m *models.Module, indent string) {
	msg := m.Title
	if m.Message != "" {
		msg += ": " + m.Message
	}
	if m.Error != "" {
		msg += ": " + m.Error
	}
	fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\n", indent, m.Name, m.Level, sinceColumn(now, m.Since), msg)
	for _, s := range m.Scopes {
		printScope(w, now, s, indent+"  ")
	}
	for _, c := range m.Modules {
		printModule(w, now, c, indent+"  ")
	}
}

func printScope(w io.Writer, now time.Time, s *models.HealthScope, indent string) {
	msg := s.Message
	if s.Error != "" {
		msg += ": " + s.Error
	}
	fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\n", indent, s.Name, s.Level, sinceColumn(now, s.Since), msg)
	for _, c := range s.Children {
		printScope(w, now, c, indent+"  ")
	}
}

func sinceColumn(now time.Time, t *time.Time) string {
	if t == nil {
		return "-"
	}
	return age(now, t)
}

// printHooks prints the start hooks in order with their durations.
func printHooks(w io.Writer, h *models.Hive) {
	if len(h.Hooks) == 0 {
		return
	}
	fmt.Fprintf(w, "\nStart hooks (populate took %s, start %s):\n",
		time.Duration(h.Timings.Populate), time.Duration(h.Timings.Start))
	tw := newTable(w)
	fmt.Fprintf(tw, "  #\tModule\tFunction\tTook\n")
	n := 0
	for _, hk := range h.Hooks {
		if hk.Start == "" {
			continue
		}
		n++
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", n, hk.Module, hk.Start, time.Duration(hk.StartDuration))
	}
	tw.Flush()
}
