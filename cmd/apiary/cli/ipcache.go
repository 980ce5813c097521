package cli

import (
	"context"
	"fmt"
	"iter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newIPCacheCommand is `apiary ipcache list|get`: the agent's
// IP-to-identity cache.
func newIPCacheCommand(global *options) *cobra.Command {
	return newResourceCommand("ipcache", "Show the IP to identity cache", func(output *outputFormat) []*cobra.Command {
		var prefix string
		list := listCommand(global, output, listSpec[models.IPCache, models.IPCacheEntry]{
			use: "list", short: "List every entry (or those within --prefix)", args: cobra.NoArgs,
			flags: func(fs *pflag.FlagSet) {
				fs.StringVar(&prefix, "prefix", "", "Only entries within this CIDR (or IP)")
			},
			pages: func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.IPCache, error] {
				return c.IPCachePages(ctx, prefix, client.ListOptions{})
			},
			items:     func(p *models.IPCache) []models.IPCacheEntry { return p.Entries },
			text:      ipcacheTable(func(p *models.IPCache) []models.IPCacheEntry { return p.Entries }),
			jsonHead:  func(p *models.IPCache) []jsonField { return []jsonField{{"revision", p.Revision}} },
			jsonItems: "entries",
		})
		get := getCommand(global, output, getSpec[*models.IPCacheEntry]{
			use: "get <ip>", short: "Show the entry of the longest prefix that holds an IP", args: cobra.ExactArgs(1),
			fetch: func(ctx context.Context, c *client.Client, args []string) (*models.IPCacheEntry, error) {
				return c.IPCacheGet(ctx, args[0])
			},
			text: ipcacheTable(func(e *models.IPCacheEntry) []models.IPCacheEntry { return []models.IPCacheEntry{*e} }),
		})
		return []*cobra.Command{list, get}
	})
}

// ipcacheTable prints one line per entry; reserved identities carry
// their name.
func ipcacheTable[V any](entries func(V) []models.IPCacheEntry) table[V] {
	return table[V]{
		header: []string{"IP", "IDENTITY", "SOURCE", "TUNNEL PEER", "KEY", "POD"},
		trim:   true,
		rows: func(v V) [][]string {
			var rows [][]string
			for _, e := range entries(v) {
				id := fmt.Sprint(e.Identity)
				if e.Reserved != "" {
					id += " (" + e.Reserved + ")"
				}
				pod := ""
				if e.K8sPodName != "" {
					pod = e.K8sNamespace + "/" + e.K8sPodName
				}
				rows = append(rows, []string{e.Prefix, id, e.Source, e.TunnelPeer, fmt.Sprint(e.EncryptKey), pod})
			}
			return rows
		},
	}
}
