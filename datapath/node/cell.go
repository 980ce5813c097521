package node

import (
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Cell provides the node Manager, the "node-handlers" value group,
// GET /v1/node and the "Nodes" status line. It needs the ipcache and the
// local-node store (this node, and its cluster); with an enabled
// kvstore.Client it registers the local node and watches the cluster's
// nodes.
var Cell = cell.Module("node-manager", "Node manager: local and cluster nodes, node handlers",
	cell.ProvidePrivate(newManagerFromParams),
	cell.Provide(
		func(m *manager) Manager { return m },
		newStatusProvider,
		newNodesHandler,
	),
	cell.Invoke(func(Manager) {}),
)

type managerParams struct {
	cell.In

	Log       *slog.Logger
	Lifecycle cell.Lifecycle
	Health    cell.Health
	Jobs      job.Group
	Local     localnode.Store
	IPCache   ipcache.IPCache
	KVStore   kvstore.Client `optional:"true"`
	KVConfig  kvstore.Config `optional:"true"`
	Metrics   *store.Metrics `optional:"true"`
	Handlers  []NodeHandler  `group:"node-handlers"`
}

// newManagerFromParams allocates the manager; at start it adds the local
// node (ipcache, handlers), registers it in the kvstore and starts the
// watcher and the periodic validation.
func newManagerFromParams(p managerParams) *manager {
	local := p.Local.Get()
	m := &manager{
		log: p.Log, local: FromLocalNode(local), ipc: p.IPCache, nodes: map[Identity]Node{},
		handlers: newHandlerSet(p.Handlers, p.Health, p.Log),
	}
	if p.KVStore != nil && p.KVStore.Enabled() {
		m.kv = newKVSync(m, p.KVStore, local.Cluster, p.Log, p.Metrics, p.KVConfig.KVStorePeriodicSync)
	}
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			m.NodeUpdated(m.local)
			if m.kv != nil {
				m.kv.start(p.Jobs, m.local)
			}
			p.Jobs.Add(job.Timer("node-validate", m.validate, ValidateInterval))
			p.Health.OK("local node " + m.local.GetKeyName())
			return nil
		},
	})
	return m
}
