package cli

import (
	"context"
	"iter"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newServiceCommand is `apiary service list`: the ClusterMesh global
// services, one row per sharing cluster.
func newServiceCommand(global *options) *cobra.Command {
	return newResourceCommand("service", "Show the ClusterMesh global services", func(output *outputFormat) []*cobra.Command {
		list := listCommand(global, output, listSpec[models.GlobalServiceList, models.GlobalService]{
			use: "list", short: "List the global services the remote clusters share, per cluster", args: cobra.NoArgs,
			pages: func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.GlobalServiceList, error] {
				return c.ServicePages(ctx, client.ListOptions{})
			},
			items: func(p *models.GlobalServiceList) []models.GlobalService { return p.Items },
			text: table[*models.GlobalServiceList]{
				header: []string{"Service", "Cluster", "Frontends", "Backends"},
				trim:   true,
				rows:   serviceRows,
			},
		})
		return []*cobra.Command{list}
	})
}

// serviceRows are one row per service and sharing cluster, in the
// agent's order (namespace/name, then cluster).
func serviceRows(p *models.GlobalServiceList) [][]string {
	var rows [][]string
	for _, s := range p.Items {
		for _, c := range s.Clusters {
			rows = append(rows, []string{s.Namespace + "/" + s.Name, c.Cluster,
				strings.Join(c.Frontends, ", "), strings.Join(c.Backends, ", ")})
		}
	}
	return rows
}
