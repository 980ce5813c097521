package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newIPCacheCommand is `apiary ipcache list|get`: the agent's
// IP-to-identity cache.
func newIPCacheCommand(global *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ipcache",
		Short: "Show the IP to identity cache",
	}
	var output outputFormat
	var prefix string
	output.register(cmd.PersistentFlags())
	list := &cobra.Command{
		Use:   "list",
		Short: "List every entry (or those within --prefix)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return query(cmd, global, output,
				func(ctx context.Context, c *client.Client) (*models.IPCache, error) {
					return c.IPCacheList(ctx, prefix)
				},
				func(w io.Writer, cache *models.IPCache) { printIPCache(w, cache.Entries) })
		},
	}
	list.Flags().StringVar(&prefix, "prefix", "", "Only entries within this CIDR (or IP)")
	get := &cobra.Command{
		Use:   "get <ip>",
		Short: "Show the entry of the longest prefix that holds an IP",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return query(cmd, global, output,
				func(ctx context.Context, c *client.Client) (*models.IPCacheEntry, error) {
					return c.IPCacheGet(ctx, args[0])
				},
				func(w io.Writer, e *models.IPCacheEntry) { printIPCache(w, []models.IPCacheEntry{*e}) })
		},
	}
	cmd.AddCommand(list, get)
	return cmd
}

// printIPCache prints one line per entry; reserved identities carry
// their name.
func printIPCache(w io.Writer, entries []models.IPCacheEntry) {
	printTrimmedTable(w, func(tw io.Writer) {
		fmt.Fprintln(tw, "IP\tIDENTITY\tSOURCE\tTUNNEL PEER\tKEY\tPOD")
		for _, e := range entries {
			id := fmt.Sprint(e.Identity)
			if e.Reserved != "" {
				id += " (" + e.Reserved + ")"
			}
			pod := ""
			if e.K8sPodName != "" {
				pod = e.K8sNamespace + "/" + e.K8sPodName
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", e.Prefix, id, e.Source, e.TunnelPeer, e.EncryptKey, pod)
		}
	})
}
