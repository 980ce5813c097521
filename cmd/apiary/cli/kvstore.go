package cli

import (
	"context"
	"iter"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newKVStoreCommand is `apiary kvstore get|list`: read-only access to the
// agent's kvstore for debugging, like `cilium kvstore get`.
func newKVStoreCommand(global *options) *cobra.Command {
	return newResourceCommand("kvstore", "Read keys of the agent's kvstore (etcd)", func(output *outputFormat) []*cobra.Command {
		get := getCommand(global, output, getSpec[*models.KVPair]{
			use: "get <key>", short: "Print one key and its value", args: cobra.ExactArgs(1),
			fetch: func(ctx context.Context, c *client.Client, args []string) (*models.KVPair, error) {
				return c.KVStoreGet(ctx, args[0])
			},
			text: table[*models.KVPair]{rows: func(p *models.KVPair) [][]string { return pairRows([]models.KVPair{*p}) }},
		})
		list := listCommand(global, output, listSpec[models.KVPairList, models.KVPair]{
			use: "list [prefix]", short: "Print every key under a prefix (all keys without one)", args: cobra.MaximumNArgs(1),
			pages: func(ctx context.Context, c *client.Client, args []string) iter.Seq2[*models.KVPairList, error] {
				prefix := ""
				if len(args) == 1 {
					prefix = args[0]
				}
				return c.KVStorePages(ctx, prefix, client.ListOptions{})
			},
			items: func(p *models.KVPairList) []models.KVPair { return p.Items },
			text:  table[*models.KVPairList]{rows: func(p *models.KVPairList) [][]string { return pairRows(p.Items) }},
		})
		return []*cobra.Command{get, list}
	})
}

// pairRows are `key => value` lines.
func pairRows(pairs []models.KVPair) [][]string {
	rows := make([][]string, 0, len(pairs))
	for _, p := range pairs {
		rows = append(rows, []string{p.Key + " => " + p.Value})
	}
	return rows
}
