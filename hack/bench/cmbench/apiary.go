package cmbench

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

// local is cluster1, the cluster whose agent reads cluster2.
var local = cluster.Info{ClusterName: "cluster1", ClusterID: 1, MaxConnectedClusters: 255}

// agent is the part of an apiary agent a remote cluster feeds: node
// manager, ipcache (with one listener) and identity cache, composed from
// their cells as the agent composes them, plus the controllers.
type agent struct {
	hive        *hive.Hive
	nodes       node.Manager
	ipc         ipcache.IPCache
	alloc       identity.Allocator
	remoteIDs   identitycache.RemoteIdentities
	controllers controller.Manager
}

// startAgent starts the cells; onChange is the ipcache listener.
func startAgent(ctx context.Context, onChange ipcache.ListenerFunc) (*agent, error) {
	a := &agent{}
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

func (a *agent) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = a.hive.Stop(ctx)
}

// connect builds the remote cluster as the clustermesh config watcher
// does for a new config file and connects it.
func (a *agent) connect(cfg *kvstore.EtcdConfig) *remote.Cluster {
	c := remote.New(remote.Params{Name: RemoteName, Local: local, Nodes: a.nodes, IPCache: a.ipc, Identities: a.remoteIDs,
		Controllers: a.controllers, Claims: newClaims(),
		Options: remote.Options{HeartbeatTimeout: -1}})
	c.Connect("bench/"+RemoteName, cfg)
	return c
}

// ApiaryRead starts a fresh agent (not timed), then times from the
// remote connection's start (what a new config file triggers, without
// the config directory's debounce) until the remote is ready and the
// node manager, ipcache and identity cache hold every entry of it. It
// checks every entry afterwards (not timed).
// ready is the part until the remote reported ready (every prefix
// listed into its watch store).
// cpu is the process's CPU time during the timed part.
func ApiaryRead(ctx context.Context, cfg *kvstore.EtcdConfig, s Size) (took, ready, cpu time.Duration, err error) {
	a, err := startAgent(ctx, func(ipcache.Revision, []ipcache.Change) {})
	if err != nil {
		return 0, 0, 0, err
	}
	defer a.stop()
	before := a.ipc.Len()
	// Each remote pod and each remote node address becomes an entry.
	wantLen := before + s.Endpoints + s.Nodes
	cpu0 := processCPU()
	begin := time.Now()
	c := a.connect(cfg)
	if err := c.WaitSynced(ctx); err != nil {
		return 0, 0, 0, fmt.Errorf("wait for %s synced: %w", RemoteName, err)
	}
	ready = time.Since(begin)
	for a.ipc.Len() < wantLen || countRemoteNodes(a.nodes) < s.Nodes {
		if ctx.Err() != nil {
			return 0, 0, 0, fmt.Errorf("ipcache holds %d entries, want %d: %w", a.ipc.Len(), wantLen, ctx.Err())
		}
		time.Sleep(200 * time.Microsecond)
	}
	took, cpu = time.Since(begin), processCPU()-cpu0
	return took, ready, cpu, a.check(s)
}

func countRemoteNodes(m node.Manager) int {
	n := 0
	for _, nd := range m.Nodes() {
		if nd.Cluster == RemoteName {
			n++
		}
	}
	return n
}

// check verifies that every entry of the remote arrived, with its identity.
func (a *agent) check(s Size) error {
	for i := range s.Endpoints {
		e, ok := a.ipc.Lookup(endpointPrefix(i))
		if !ok || e.Identity != identityOf(i%s.Identities) {
			return fmt.Errorf("ipcache entry %s = %+v (present %t), want identity %d", endpointPrefix(i), e, ok, identityOf(i%s.Identities))
		}
	}
	for i := range s.Identities {
		if a.alloc.LookupIdentityByID(identityOf(i)) == nil {
			return fmt.Errorf("identity %d missing", identityOf(i))
		}
	}
	if n := countRemoteNodes(a.nodes); n != s.Nodes {
		return fmt.Errorf("%d nodes of %s, want %d", n, RemoteName, s.Nodes)
	}
	return nil
}

// claims is the id bookkeeping of one agent, with one remote.
type claims struct {
	mu      sync.Mutex
	holders map[uint32]string
}

func newClaims() *claims { return &claims{holders: map[uint32]string{}} }

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
