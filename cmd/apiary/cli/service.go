package cli

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newServiceCommand is `apiary service list`: the load-balancing
// frontends in Cilium's columns, or with --clusters the ClusterMesh
// global services, one row per sharing cluster.
func newServiceCommand(global *options) *cobra.Command {
	return newResourceCommand("service", "Show the services: load-balancing frontends and ClusterMesh global services", func(output *outputFormat) []*cobra.Command {
		pages := func(ctx context.Context, c *client.Client, _ []string) iter.Seq2[*models.GlobalServiceList, error] {
			return c.ServicePages(ctx, client.ListOptions{})
		}
		items := func(p *models.GlobalServiceList) []models.GlobalService { return p.Items }
		var clusters bool
		list := listCommand(global, output, listSpec[models.GlobalServiceList, models.GlobalService]{
			use: "list", short: "List the service frontends and their backends (with --clusters: the global services per sharing cluster)",
			args: cobra.NoArgs, pages: pages, items: items,
			flags: func(fs *pflag.FlagSet) {
				fs.BoolVar(&clusters, "clusters", false, "List the ClusterMesh global services, one row per sharing cluster")
			},
			text: table[*models.GlobalServiceList]{
				header: []string{"ID", "Frontend", "Service Type", "Backend"},
				trim:   true,
				rows:   frontendRows,
			},
		})
		byCluster := listCommand(global, output, listSpec[models.GlobalServiceList, models.GlobalService]{
			use: "list", args: cobra.NoArgs, pages: pages, items: items,
			text: table[*models.GlobalServiceList]{
				header: []string{"Service", "Cluster", "Frontends", "Backends"},
				trim:   true,
				rows:   clusterRows,
			},
		})
		run := list.RunE
		list.RunE = func(cmd *cobra.Command, args []string) error {
			if clusters {
				return byCluster.RunE(cmd, args)
			}
			return run(cmd, args)
		}
		return []*cobra.Command{list}
	})
}

// frontendRows are Cilium's `cilium service list`: a frontend's first
// backend on its row, the others on rows of their own, each
// "<n> => <address> (<state>)" with the cluster of a remote one.
func frontendRows(p *models.GlobalServiceList) [][]string {
	var rows [][]string
	for _, s := range p.Items {
		for _, f := range s.Frontends {
			row := []string{fmt.Sprint(f.ID), f.Address, f.Type, ""}
			for i, be := range f.Backends {
				state := be.State
				if be.ClusterID != 0 {
					state += ", " + be.Cluster
				}
				if i > 0 {
					rows = append(rows, row)
					row = []string{"", "", "", ""}
				}
				row[3] = fmt.Sprintf("%d => %s (%s)", i+1, be.Address, state)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// clusterRows are one row per global service and sharing cluster, in the
// agent's order (namespace/name, then cluster).
func clusterRows(p *models.GlobalServiceList) [][]string {
	var rows [][]string
	for _, s := range p.Items {
		for _, c := range s.Clusters {
			rows = append(rows, []string{s.Namespace + "/" + s.Name, c.Cluster,
				strings.Join(c.Frontends, ", "), strings.Join(c.Backends, ", ")})
		}
	}
	return rows
}
