// Command apiaryside is meshbench's apiary process: the part of an
// apiary agent a remote cluster feeds (kvstore client, node manager,
// ipcache with one listener, identity cache, controllers and the
// remote connection of clustermesh/remote), composed from their cells as
// the agent composes them and as cmbench does. It connects to the remote
// given by -etcd-config and reports ready (see package side) once the
// remote is synced and every node, identity and ipcache entry of it is
// held, timed from the hive's start.
package main

import (
	"context"
	"flag"
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
	"github.com/apiary-net/apiary/hack/bench/meshbench/side"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
)

func main() {
	cfgFile := flag.String("etcd-config", "", "the remote cluster's etcd config file")
	remoteName := flag.String("remote", "cluster2", "the remote cluster's name")
	remoteID := flag.Int("remote-id", 2, "the remote cluster's id (its identities are <id><<16 | 256+i)")
	nodes := flag.Int("nodes", 0, "remote nodes to wait for")
	ids := flag.Int("identities", 0, "remote identities to wait for")
	endpoints := flag.Int("endpoints", 0, "remote ipcache entries to wait for")
	memProfile := flag.String("memprofile", "", "write a heap profile (after ready and a GC) to this file")
	flag.Parse()
	cfg, err := kvstore.ReadEtcdConfig(*cfgFile)
	if err != nil {
		side.Fail("apiaryside", err)
	}
	w := want{name: *remoteName, id: *remoteID, nodes: *nodes, identities: *ids, endpoints: *endpoints}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	begin := time.Now()
	a, err := startAgent(ctx)
	if err != nil {
		side.Fail("apiaryside", err)
	}
	c := a.connect(w.name, cfg)
	if err := a.wait(ctx, c, w); err != nil {
		side.Fail("apiaryside", err)
	}
	ready := time.Since(begin)
	if err := a.check(w); err != nil {
		side.Fail("apiaryside", err)
	}
	side.Serve(ready, *memProfile)
	stop, cancelStop := context.WithTimeout(context.Background(), time.Minute)
	defer cancelStop()
	_ = a.hive.Stop(stop)
}

// local is cluster1, the cluster whose agent reads the remote.
var local = cluster.Info{ClusterName: "cluster1", ClusterID: 1, MaxConnectedClusters: 255}

// want is what the remote holds.
type want struct {
	name                         string
	id                           int
	nodes, identities, endpoints int
}

type agent struct {
	hive        *hive.Hive
	nodes       node.Manager
	ipc         ipcache.IPCache
	alloc       identity.Allocator
	remoteIDs   identitycache.RemoteIdentities
	controllers controller.Manager
}

func startAgent(ctx context.Context) (*agent, error) {
	a := &agent{}
	h := stdhive.New(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		controller.Cell, kvstorecell.Cell, identitycell.Cell, ipcachecell.Cell, nodecell.Cell, cell.Config(cluster.DefaultInfo),
		cell.Provide(
			func(c cluster.Info) localnode.Store {
				return localnode.NewStore(localnode.LocalNode{Name: "bench", IP: netip.MustParseAddr("192.0.2.1"), Cluster: c})
			},
			func() ipcache.ListenerOut {
				return ipcache.ListenerOut{Listener: ipcache.ListenerFunc(func(ipcache.Revision, []ipcache.Change) {})}
			},
		),
		cell.Module("bench-clustermesh", "The benchmark's remote clusters",
			cell.Invoke(func(n node.Manager, ipc ipcache.IPCache, al identity.Allocator, r identitycache.RemoteIdentities, c controller.Manager) {
				a.nodes, a.ipc, a.alloc, a.remoteIDs, a.controllers = n, ipc, al, r, c
			})))
	if err := h.Flags().Parse([]string{"--cluster-name=" + local.ClusterName, fmt.Sprintf("--cluster-id=%d", local.ClusterID)}); err != nil {
		return nil, err
	}
	if err := h.Populate(); err != nil {
		return nil, fmt.Errorf("populate agent: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	a.hive = h
	return a, nil
}

// connect builds the remote cluster as the clustermesh config watcher
// does for a new config file and connects it.
func (a *agent) connect(name string, cfg *kvstore.EtcdConfig) *remote.Cluster {
	c := remote.New(remote.Params{Name: name, Local: local, Nodes: a.nodes, IPCache: a.ipc, Identities: a.remoteIDs,
		Controllers: a.controllers, Claims: &claims{holders: map[uint32]string{}},
		Options: remote.Options{HeartbeatTimeout: -1}})
	c.Connect("bench/"+name, cfg)
	return c
}

// wait returns once the remote is synced and the node manager and
// ipcache hold all of it (each remote pod and each remote node address
// is an ipcache entry).
func (a *agent) wait(ctx context.Context, c *remote.Cluster, w want) error {
	wantLen := a.ipc.Len() + w.endpoints + w.nodes
	if err := c.WaitSynced(ctx); err != nil {
		return fmt.Errorf("wait for %s synced: %w", w.name, err)
	}
	// The ipcache count is cheap; the node count copies every node, so
	// it is polled only once the ipcache is complete, to keep the
	// benchmark's own garbage out of the heap it measures.
	for a.ipc.Len() < wantLen {
		if ctx.Err() != nil {
			return fmt.Errorf("ipcache holds %d entries, want %d: %w", a.ipc.Len(), wantLen, ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	for a.countNodes(w.name) < w.nodes {
		if ctx.Err() != nil {
			return fmt.Errorf("node manager holds %d nodes of %s, want %d: %w", a.countNodes(w.name), w.name, w.nodes, ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func (a *agent) countNodes(cluster string) int {
	n := 0
	for _, nd := range a.nodes.Nodes() {
		if nd.Cluster == cluster {
			n++
		}
	}
	return n
}

// check verifies that every identity of the remote arrived (numbered
// as cmbench.Fill numbers them).
func (a *agent) check(w want) error {
	for i := range w.identities {
		id := identity.NumericIdentity(w.id<<16 | (256 + i))
		if a.alloc.LookupIdentityByID(id) == nil {
			return fmt.Errorf("identity %d missing", id)
		}
	}
	if n := a.countNodes(w.name); n != w.nodes {
		return fmt.Errorf("%d nodes of %s, want %d", n, w.name, w.nodes)
	}
	return nil
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
