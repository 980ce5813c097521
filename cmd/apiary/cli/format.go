package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/api/client"
)

// newTable returns a tabwriter for aligned columns.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
}

// age formats how long ago t was: "4s ago", "3m12s ago", "2h5m ago".
// A nil or zero time is "never".
func age(now time.Time, t *time.Time) string {
	if t == nil || t.IsZero() {
		return "never"
	}
	d := now.Sub(*t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds ago", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm ago", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%dh ago", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// outputFormat is the value of the -o flag: text (tables) or json.
type outputFormat string

// register adds -o/--output to fs.
func (o *outputFormat) register(fs *pflag.FlagSet) {
	fs.StringVarP((*string)(o), "output", "o", "text", "Output format: text or json")
}

// check refuses anything but text and json, naming the flag.
func (o outputFormat) check() error {
	if o != "text" && o != "json" {
		return fmt.Errorf("--output: %q is not text or json", string(o))
	}
	return nil
}

// isJSON reports whether -o json was given.
func (o outputFormat) isJSON() bool { return o == "json" }

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// query is the body of a read-only command: it checks -o, asks the agent
// with fetch and prints the answer as JSON or with text.
func query[T any](cmd *cobra.Command, global *options, output outputFormat,
	fetch func(context.Context, *client.Client) (T, error), text func(io.Writer, T)) error {
	if err := output.check(); err != nil {
		return err
	}
	c := global.client()
	defer c.Close()
	v, err := fetch(cmd.Context(), c)
	if err != nil {
		return err
	}
	if output.isJSON() {
		return printJSON(cmd.OutOrStdout(), v)
	}
	text(cmd.OutOrStdout(), v)
	return nil
}
