package node

import (
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Params are what a NodeManager needs.
type Params struct {
	Log *slog.Logger
	// Health is where the handlers' failures are reported.
	Health cell.Health
	// Local is this agent's node, in Cluster.
	Local   Node
	Cluster cluster.Info
	// IPCache gets every node's addresses.
	IPCache ipcache.IPCache
	// Handlers hear of every node change.
	Handlers []NodeHandler
	// KVStore, when enabled, registers the local node and watches the
	// cluster's; Metrics (optional) counts its store operations;
	// PeriodicSync is --kvstore-periodic-sync.
	KVStore      kvstore.Client
	Metrics      *store.Metrics
	PeriodicSync time.Duration
}

// New returns a node manager; Start brings it up.
func New(p Params) *NodeManager {
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	m := &NodeManager{
		log: p.Log, self: p.Local.Identity(), local: p.Local, ipc: p.IPCache, nodes: map[Identity]Node{},
		handlers: newHandlerSet(p.Handlers, p.Health, p.Log),
	}
	if p.KVStore != nil && p.KVStore.Enabled() {
		m.kv = newKVSync(m, p.KVStore, p.Cluster, p.Log, p.Metrics, p.PeriodicSync)
	}
	return m
}

// Start adds the local node (ipcache, handlers), registers it in the
// kvstore, and returns the jobs to run: the kvstore writer and watcher,
// and the periodic validation. Call it once the kvstore client has
// started.
func (m *NodeManager) Start() []job.Job {
	m.mu.Lock()
	m.started = true
	local := m.local.Clone()
	m.mu.Unlock()
	m.NodeUpdated(local)
	var jobs []job.Job
	if m.kv != nil {
		jobs = m.kv.start(local)
	}
	return append(jobs, job.Timer("node-validate", m.validate, ValidateInterval))
}

// Stats are the figures of the node manager's status line.
type Stats struct {
	// Nodes is the number of nodes, Local of those this agent's own.
	Nodes, Local int
	// LocalKey is the local node's cluster/name.
	LocalKey string
	// KVStore is the kvstore side; nil without a kvstore.
	KVStore *KVStats
}

// KVStats are the kvstore side of Stats.
type KVStats struct {
	// WatchPrefix is the prefix of the cluster's nodes; Listed says it
	// was listed once, Registered that the local node is written.
	WatchPrefix        string
	Listed, Registered bool
	// Malformed and Refused count skipped nodes; Last names the last.
	Malformed, Refused int
	Last               string
}

// Stats returns the figures now.
func (m *NodeManager) Stats() Stats {
	nodes := m.Nodes()
	st := Stats{Nodes: len(nodes), LocalKey: m.self.String()}
	for i := range nodes {
		if m.isLocal(&nodes[i]) {
			st.Local++
		}
	}
	if k := m.kv; k != nil {
		malformed, refused, last := k.skipped()
		st.KVStore = &KVStats{
			WatchPrefix: k.watchPrefix(), Listed: k.watch.Synced(), Registered: k.sync.IsSynced(),
			Malformed: malformed, Refused: refused, Last: last,
		}
	}
	return st
}
