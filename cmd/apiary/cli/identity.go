package cli

import (
	"context"
	"fmt"
	"iter"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newIdentityCommand is `apiary identity list|get`: the security
// identities the agent knows, like `cilium identity list|get`.
func newIdentityCommand(global *options) *cobra.Command {
	return newResourceCommand("identity", "Show security identities", func(output *outputFormat) []*cobra.Command {
		list := listCommand(global, output, listSpec[models.IdentityList, models.Identity]{
			use: "list", short: "List every identity: reserved, global and local", args: cobra.NoArgs,
			pages: func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.IdentityList, error] {
				return c.IdentityPages(ctx, client.ListOptions{})
			},
			items: func(p *models.IdentityList) []models.Identity { return p.Items },
			text: table[*models.IdentityList]{
				header: []string{"ID", "LABELS"},
				rows:   func(p *models.IdentityList) [][]string { return identityRows(p.Items, false) },
			},
		})
		get := getCommand(global, output, getSpec[*models.Identity]{
			use: "get <id|reserved-name>", short: "Show one identity: its id, scope and labels", args: cobra.ExactArgs(1),
			fetch: func(ctx context.Context, c *client.Client, args []string) (*models.Identity, error) {
				return c.IdentityGet(ctx, args[0])
			},
			text: table[*models.Identity]{
				header: []string{"ID", "SCOPE", "LABELS"},
				rows:   func(id *models.Identity) [][]string { return identityRows([]models.Identity{*id}, true) },
			},
		})
		return []*cobra.Command{list, get}
	})
}

// identityRows are the table rows of identities: one label per line.
func identityRows(ids []models.Identity, withScope bool) [][]string {
	var rows [][]string
	for _, id := range ids {
		first := ""
		if len(id.Labels) > 0 {
			first = id.Labels[0]
		}
		row := []string{fmt.Sprint(id.ID)}
		if withScope {
			row = append(row, id.Scope)
		}
		rows = append(rows, append(row, first))
		for _, l := range id.Labels[min(1, len(id.Labels)):] {
			cont := []string{""}
			if withScope {
				cont = append(cont, "")
			}
			rows = append(rows, append(cont, l))
		}
	}
	return rows
}
