package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
)

// newClusterMeshCommand is `apiary clustermesh status`: each remote
// cluster's connection, config, prefixes and failures.
func newClusterMeshCommand(global *options) *cobra.Command {
	return newResourceCommand("clustermesh", "Show the remote clusters this agent is meshed with", func(output *outputFormat) []*cobra.Command {
		st := getCommand(global, output, getSpec[*models.ClusterMesh]{
			use: "status", short: "Print every remote cluster: connected, ready, config, per-prefix sync state, failures",
			args: cobra.NoArgs,
			fetch: func(ctx context.Context, c *client.Client, _ []string) (*models.ClusterMesh, error) {
				return c.ClusterMesh(ctx)
			},
			text: table[*models.ClusterMesh]{rows: clusterMeshRows},
		})
		return []*cobra.Command{st}
	})
}

// clusterMeshRows are the lines of `apiary clustermesh status`.
func clusterMeshRows(m *models.ClusterMesh) [][]string {
	line := func(format string, args ...any) []string { return []string{fmt.Sprintf(format, args...)} }
	if m.ConfigDir == "" {
		return [][]string{line("ClusterMesh is disabled (--clustermesh-config is empty)")}
	}
	ready := 0
	for _, c := range m.Clusters {
		if c.Ready {
			ready++
		}
	}
	rows := [][]string{line("Local cluster %s (id %d), config dir %s: %d/%d remote clusters ready",
		m.LocalCluster, m.LocalClusterID, m.ConfigDir, ready, len(m.Clusters))}
	for _, c := range m.Clusters {
		rows = append(rows, remoteClusterRows(c)...)
	}
	for _, inv := range m.Invalid {
		rows = append(rows, line("%s: refused: %s", inv.File, inv.Error))
	}
	return rows
}

func remoteClusterRows(c models.RemoteCluster) [][]string {
	line := func(format string, args ...any) []string { return []string{fmt.Sprintf(format, args...)} }
	state := "not ready"
	if c.Ready {
		state = "ready"
	}
	rows := [][]string{line("%s: %s, connected=%t: %s", c.Name, state, c.Connected, c.Status)}
	cfg := "not found (required)"
	if c.Config.Found {
		var caps []string
		if c.Config.SyncedCanaries {
			caps = append(caps, "synced canaries")
		} else {
			caps = append(caps, "no synced canaries (immediate mode)")
		}
		caps = append(caps, fmt.Sprintf("max %d clusters", c.Config.MaxConnectedClusters))
		if c.Config.Cached {
			caps = append(caps, "cached")
		}
		cfg = fmt.Sprintf("cluster id %d, %s", c.Config.ClusterID, strings.Join(caps, ", "))
	}
	rows = append(rows, line("  config file: %s", c.ConfigFile), line("  cluster config: %s", cfg))
	if c.Etcd != "" {
		rows = append(rows, line("  %s", c.Etcd))
	}
	for _, p := range c.Prefixes {
		synced := "listing"
		if p.Synced {
			synced = "synced"
		}
		r := fmt.Sprintf("  %s: %s, %d entries, %d malformed, %d refused", p.Prefix, synced, p.Entries, p.Malformed, p.Refused)
		if p.Canary != "" {
			r += " (canary " + p.Canary + ")"
		}
		rows = append(rows, []string{r})
		if p.LastSkipped != "" {
			rows = append(rows, line("    last skipped: %s", p.LastSkipped))
		}
	}
	last := "never"
	if c.LastFailure != nil {
		last = c.LastFailure.Format("2006-01-02T15:04:05Z07:00") + ": " + c.LastError
	}
	rows = append(rows, line("  %d nodes, %d identities, %d endpoints, %d services; %d failures (last: %s)",
		c.Nodes, c.Identities, c.Endpoints, c.Services, c.Failures, last))
	return rows
}
