package cli

import (
	"context"
	"io"
	"iter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/api/client"
)

// newResourceCommand is `apiary <use> <subcommand>` for one kind of
// object the agent shows (identity, ipcache, node, kvstore): a group
// with -o/--output for every subcommand, which subcommands builds from
// listCommand and getCommand.
func newResourceCommand(use, short string, subcommands func(output *outputFormat) []*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	var output outputFormat
	output.register(cmd.PersistentFlags())
	cmd.AddCommand(subcommands(&output)...)
	return cmd
}

// table says how a list or an object prints as text: a header row and
// the rows of each page (or object), aligned in columns.
type table[V any] struct {
	header []string
	rows   func(V) [][]string
	// trim drops the blanks that empty last columns leave at line ends.
	trim bool
}

// getSpec describes a `get` command: one object, fetched and printed as
// a table or as JSON.
type getSpec[T any] struct {
	use, short string
	args       cobra.PositionalArgs
	fetch      func(ctx context.Context, c *client.Client, args []string) (T, error)
	text       table[T]
}

// getCommand builds a `get` command from spec.
func getCommand[T any](global *options, output *outputFormat, spec getSpec[T]) *cobra.Command {
	return &cobra.Command{
		Use: spec.use, Short: spec.short, Args: spec.args,
		RunE: func(cmd *cobra.Command, args []string) error {
			return query(cmd, global, *output,
				func(ctx context.Context, c *client.Client) (T, error) { return spec.fetch(ctx, c, args) },
				func(w io.Writer, v T) {
					t := &streamTable{w: w, trim: spec.text.trim}
					t.page(withHeader(spec.text.header, spec.text.rows(v)))
				})
		},
	}
}

// listSpec describes a `list` command: the pages to ask for and how to
// print them as they come.
type listSpec[P, T any] struct {
	use, short string
	args       cobra.PositionalArgs
	flags      func(*pflag.FlagSet) // extra flags, if any
	pages      func(ctx context.Context, c *client.Client, args []string) iter.Seq2[*P, error]
	// items are the items of a page, for -o json.
	items func(*P) []T
	text  table[*P]
	// jsonHead, when set, makes -o json an object: these fields of the
	// first page, then the items as member jsonItems. Without it, -o json
	// prints a JSON array of the items.
	jsonHead  func(*P) []jsonField
	jsonItems string
}

// listCommand builds a `list` command from spec. It prints each page
// as it arrives, so a long list starts printing at once and the CLI
// holds a page at a time.
func listCommand[P, T any](global *options, output *outputFormat, spec listSpec[P, T]) *cobra.Command {
	cmd := &cobra.Command{
		Use: spec.use, Short: spec.short, Args: spec.args,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.check(); err != nil {
				return err
			}
			c := global.client()
			defer c.Close()
			if output.isJSON() {
				return spec.printJSON(cmd.Context(), cmd.OutOrStdout(), c, args)
			}
			return spec.printText(cmd.Context(), cmd.OutOrStdout(), c, args)
		},
	}
	if spec.flags != nil {
		spec.flags(cmd.Flags())
	}
	return cmd
}

func (spec listSpec[P, T]) printText(ctx context.Context, w io.Writer, c *client.Client, args []string) error {
	t := &streamTable{w: w, trim: spec.text.trim}
	header := spec.text.header
	for page, err := range spec.pages(ctx, c, args) {
		if err != nil {
			return err
		}
		t.page(withHeader(header, spec.text.rows(page)))
		header = nil
	}
	return t.err
}

func (spec listSpec[P, T]) printJSON(ctx context.Context, w io.Writer, c *client.Client, args []string) error {
	s := &jsonStream{w: w, itemsKey: spec.jsonItems}
	for page, err := range spec.pages(ctx, c, args) {
		if err != nil {
			return err
		}
		if !s.started && spec.jsonHead != nil {
			s.fields = spec.jsonHead(page)
		}
		items := spec.items(page)
		anys := make([]any, len(items))
		for i := range items {
			anys[i] = items[i]
		}
		s.items(anys)
	}
	return s.end()
}

// withHeader puts header (when not nil) before rows.
func withHeader(header []string, rows [][]string) [][]string {
	if header == nil {
		return rows
	}
	return append([][]string{header}, rows...)
}
