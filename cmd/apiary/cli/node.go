package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newNodeCommand is `apiary node list`: the nodes the agent knows, with
// the columns of `cilium node list`.
func newNodeCommand(global *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Show the nodes of the cluster (and of meshed clusters)",
	}
	var output outputFormat
	list := &cobra.Command{
		Use:   "list",
		Short: "List every node with its addresses and pod CIDRs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return query(cmd, global, output, func(ctx context.Context, c *client.Client) ([]models.Node, error) { return c.Nodes(ctx) }, printNodes)
		},
	}
	output.register(list.Flags())
	cmd.AddCommand(list)
	return cmd
}

// printNodes prints Cilium's node table; nodes of another cluster than
// the local node's are named <cluster>/<node>.
func printNodes(w io.Writer, nodes []models.Node) {
	localCluster := ""
	for _, n := range nodes {
		if n.Local {
			localCluster = n.Cluster
		}
	}
	name := func(n models.Node) string {
		if n.Cluster != localCluster {
			return n.Cluster + "/" + n.Name
		}
		return n.Name
	}
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b models.Node) int { return cmp.Compare(name(a), name(b)) })
	printTrimmedTable(w, func(tw io.Writer) {
		fmt.Fprintln(tw, "Name\tIPv4 Address\tEndpoint CIDR\tIPv6 Address\tEndpoint CIDR")
		for _, n := range nodes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name(n), n.PrimaryIPv4, n.IPv4AllocCIDR, n.PrimaryIPv6, n.IPv6AllocCIDR)
		}
	})
}

// printTrimmedTable aligns what fill writes into columns, like newTable,
// and drops the blanks that empty last columns leave at line ends.
func printTrimmedTable(w io.Writer, fill func(tw io.Writer)) {
	var buf bytes.Buffer
	tw := newTable(&buf)
	fill(tw)
	tw.Flush()
	for line := range strings.Lines(buf.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
}
