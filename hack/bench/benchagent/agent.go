// Package benchagent is the part of an apiary agent a remote cluster
// feeds, as the ClusterMesh benchmarks start it: kvstore client, node
// manager, ipcache (with one listener), identity cache and controllers,
// composed from their cells as the agent composes them, and the remote
// connection of clustermesh/remote. cmbench times it in process;
// meshbench's apiary side runs it as a process of its own, so it links
// nothing the agent does not (no etcd server).
//
// It is in the hack/bench module: it may import any package of apiary.
package benchagent

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/stdhive"
	"github.com/apiary-net/apiary/clustermesh/remote"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
)

// Local is cluster1, the cluster whose agent reads the remote.
var Local = cluster.Info{ClusterName: "cluster1", ClusterID: 1, MaxConnectedClusters: 255}

// Agent is the started cells and what a benchmark reads of them.
type Agent struct {
	Hive        *hive.Hive
	Nodes       node.Manager
	IPCache     ipcache.IPCache
	Alloc       identity.Allocator
	RemoteIDs   identitycache.RemoteIdentities
	Controllers controller.Manager
}

// Start starts the cells; onChange is the ipcache listener.
func Start(ctx context.Context, onChange ipcache.ListenerFunc) (*Agent, error) {
	a := &Agent{}
	h := stdhive.New(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		controller.Cell, kvstorecell.Cell, identitycell.Cell, ipcachecell.Cell, nodecell.Cell, cell.Config(cluster.DefaultInfo),
		cell.Provide(
			func(c cluster.Info) localnode.Store {
				return localnode.NewStore(localnode.LocalNode{Name: "bench", IP: netip.MustParseAddr("192.0.2.1"), Cluster: c})
			},
			func() ipcache.ListenerOut { return ipcache.ListenerOut{Listener: onChange} },
		),
		// A module of its own, like clustermesh's, for its controllers.
		cell.Module("bench-clustermesh", "The benchmark's remote clusters",
			cell.Invoke(func(n node.Manager, ipc ipcache.IPCache, al identity.Allocator, r identitycache.RemoteIdentities, c controller.Manager) {
				a.Nodes, a.IPCache, a.Alloc, a.RemoteIDs, a.Controllers = n, ipc, al, r, c
			})))
	if err := h.Flags().Parse([]string{"--cluster-name=" + Local.ClusterName, fmt.Sprintf("--cluster-id=%d", Local.ClusterID)}); err != nil {
		return nil, err
	}
	if err := h.Populate(); err != nil {
		return nil, fmt.Errorf("populate agent: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	a.Hive = h
	return a, nil
}

// Stop stops the cells.
func (a *Agent) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = a.Hive.Stop(ctx)
}

// Connect builds the remote cluster name as the clustermesh config
// watcher does for a new config file and connects it.
func (a *Agent) Connect(name string, cfg *kvstore.EtcdConfig) *remote.Cluster {
	c := remote.New(remote.Params{Name: name, Local: Local, Nodes: a.Nodes, IPCache: a.IPCache, Identities: a.RemoteIDs,
		Controllers: a.Controllers, Claims: &claims{holders: map[uint32]string{}},
		Options: remote.Options{HeartbeatTimeout: -1}})
	c.Connect("bench/"+name, cfg)
	return c
}

// CountNodes counts the node manager's nodes of cluster.
func (a *Agent) CountNodes(cluster string) int {
	n := 0
	for _, nd := range a.Nodes.Nodes() {
		if nd.Cluster == cluster {
			n++
		}
	}
	return n
}

// claims is the id bookkeeping of one agent, with one remote.
type claims struct {
	mu      sync.Mutex
	holders map[uint32]string
}

func (c *claims) Claim(cluster string, id uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.holders[id]; ok && h != cluster {
		return fmt.Errorf("cluster id %d is already used by %s", id, h)
	}
	c.holders[id] = cluster
	return nil
}

func (c *claims) Release(cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, h := range c.holders {
		if h == cluster {
			delete(c.holders, id)
		}
	}
}

func (c *claims) Conflicts(string) []string { return nil }
