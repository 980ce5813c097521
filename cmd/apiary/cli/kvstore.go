package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/models"
)

// newKVStoreCommand is `apiary kvstore get|list`: read-only access to the
// agent's kvstore for debugging, like `cilium kvstore get`.
func newKVStoreCommand(global *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kvstore",
		Short: "Read keys of the agent's kvstore (etcd)",
	}
	var output outputFormat
	output.register(cmd.PersistentFlags())
	get := &cobra.Command{
		Use:   "get <key>",
		Short: "Print one key and its value",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.check(); err != nil {
				return err
			}
			c := global.client()
			defer c.Close()
			p, err := c.KVStoreGet(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printPairs(cmd.OutOrStdout(), output, []models.KVPair{*p}, p)
		},
	}
	list := &cobra.Command{
		Use:   "list [prefix]",
		Short: "Print every key under a prefix (all keys without one)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.check(); err != nil {
				return err
			}
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			c := global.client()
			defer c.Close()
			pairs, err := c.KVStoreList(cmd.Context(), prefix)
			if err != nil {
				return err
			}
			return printPairs(cmd.OutOrStdout(), output, pairs, pairs)
		},
	}
	cmd.AddCommand(get, list)
	return cmd
}

// printPairs prints `key => value` lines, or asJSON as JSON.
func printPairs(w io.Writer, output outputFormat, pairs []models.KVPair, asJSON any) error {
	if output.isJSON() {
		return printJSON(w, asJSON)
	}
	for _, p := range pairs {
		fmt.Fprintf(w, "%s => %s\n", p.Key, p.Value)
	}
	return nil
}
