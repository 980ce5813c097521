package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

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
			if err := output.check(); err != nil {
				return err
			}
			c := global.client()
			defer c.Close()
			ids, err := c.IdentityList(cmd.Context())
			if err != nil {
				return err
			}
			if output.isJSON() {
				return printJSON(cmd.OutOrStdout(), ids)
			}
			printIdentities(cmd.OutOrStdout(), ids, false)
			return nil
		},
	}
	get := &cobra.Command{
		Use:   "get <id|reserved-name>",
		Short: "Show one identity: its id, scope and labels",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.check(); err != nil {
				return err
			}
			c := global.client()
			defer c.Close()
			id, err := c.IdentityGet(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if output.isJSON() {
				return printJSON(cmd.OutOrStdout(), id)
			}
			printIdentities(cmd.OutOrStdout(), []models.Identity{*id}, true)
			return nil
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
