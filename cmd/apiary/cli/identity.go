package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newIdentityCommand is `apiary identity list|get`: the security
// identities the agent knows, like `cilium identity list|get`.
func newIdentityCommand(global *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "identity",
		Short: "Show security identities",
	}
	var output outputFormat
	output.register(cmd.PersistentFlags())
	list := &cobra.Command{
		Use:   "list",
		Short: "List every identity: reserved, global and local",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return query(cmd, global, output,
				func(ctx context.Context, c *client.Client) ([]models.Identity, error) { return c.IdentityList(ctx) },
				func(w io.Writer, ids []models.Identity) { printIdentities(w, ids, false) })
		},
	}
	get := &cobra.Command{
		Use:   "get <id|reserved-name>",
		Short: "Show one identity: its id, scope and labels",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return query(cmd, global, output,
				func(ctx context.Context, c *client.Client) (*models.Identity, error) {
					return c.IdentityGet(ctx, args[0])
				},
				func(w io.Writer, id *models.Identity) { printIdentities(w, []models.Identity{*id}, true) })
		},
	}
	cmd.AddCommand(list, get)
	return cmd
}

// printIdentities prints an aligned table with one label per line.
func printIdentities(w io.Writer, ids []models.Identity, withScope bool) {
	tw := newTable(w)
	scope := func(s string) string {
		if withScope {
			return s + "\t"
		}
		return ""
	}
	fmt.Fprintf(tw, "ID\t%sLABELS\n", scope("SCOPE"))
	for _, id := range ids {
		first := ""
		if len(id.Labels) > 0 {
			first = id.Labels[0]
		}
		fmt.Fprintf(tw, "%d\t%s%s\n", id.ID, scope(id.Scope), first)
		for _, l := range id.Labels[min(1, len(id.Labels)):] {
			fmt.Fprintf(tw, "\t%s%s\n", scope(""), l)
		}
	}
	tw.Flush()
}
