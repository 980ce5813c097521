package cli

import (
	"context"
	"iter"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newNodeCommand is `apiary node list`: the nodes the agent knows, with
// the columns of `cilium node list`.
func newNodeCommand(global *options) *cobra.Command {
	return newResourceCommand("node", "Show the nodes of the cluster (and of meshed clusters)", func(output *outputFormat) []*cobra.Command {
		list := listCommand(global, output, listSpec[models.NodeList, models.Node]{
			use: "list", short: "List every node with its addresses and pod CIDRs", args: cobra.NoArgs,
			pages: func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.NodeList, error] {
				return c.NodePages(ctx, client.ListOptions{})
			},
			items: func(p *models.NodeList) []models.Node { return p.Items },
			text: table[*models.NodeList]{
				header: []string{"Name", "IPv4 Address", "Endpoint CIDR", "IPv6 Address", "Endpoint CIDR"},
				trim:   true,
				rows:   nodeRows,
			},
		})
		return []*cobra.Command{list}
	})
}

// nodeRows are Cilium's node table, in the agent's order (cluster, then
// name); nodes of another cluster than the local node's are named
// <cluster>/<node>.
func nodeRows(p *models.NodeList) [][]string {
	rows := make([][]string, 0, len(p.Items))
	for _, n := range p.Items {
		name := n.Name
		if n.Cluster != p.LocalCluster {
			name = n.Cluster + "/" + n.Name
		}
		rows = append(rows, []string{name, n.PrimaryIPv4, n.IPv4AllocCIDR, n.PrimaryIPv6, n.IPv6AllocCIDR})
	}
	return rows
}
