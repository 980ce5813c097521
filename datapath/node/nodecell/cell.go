package nodecell

import (
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Cell provides the node.Manager, the "node-handlers" value group
// (node.NodeHandlerOut), GET /v1/node and the "Nodes" status line. It needs
// the ipcache and the local-node store (this node and its cluster); with
// an enabled kvstore.Client it registers the local node and watches the
// cluster's nodes.
var Cell = cell.Module("node-manager", "Node manager: local and cluster nodes, node handlers",
	cell.ProvidePrivate(newManagerFromParams),
	cell.Provide(
		func(m *node.NodeManager) node.Manager { return m },
		newStatusProvider,
		newNodesHandler,
	),
	cell.Invoke(func(node.Manager) {}),
)

type managerParams struct {
	cell.In

	Log       *slog.Logger
	Lifecycle cell.Lifecycle
	Health    cell.Health
	Jobs      job.Group
	Local     localnode.Store
	IPCache   ipcache.IPCache
	KVStore   kvstore.Client     `optional:"true"`
	KVConfig  kvstore.Config     `optional:"true"`
	Metrics   *store.Metrics     `optional:"true"`
	Handlers  []node.NodeHandler `group:"node-handlers"`
}

// newManagerFromParams builds the manager; at start (after the kvstore
// client's) it adds the local node, registers it and starts its jobs.
func newManagerFromParams(p managerParams) *node.NodeManager {
	local := p.Local.Get()
	m := node.New(node.Params{
		Log: p.Log, Health: p.Health, Local: node.FromLocalNode(local), Cluster: local.Cluster,
		IPCache: p.IPCache, Handlers: p.Handlers,
		KVStore: p.KVStore, Metrics: p.Metrics, PeriodicSync: p.KVConfig.KVStorePeriodicSync,
	})
	// The local node changes after start when its pod CIDRs come from
	// the Kubernetes Node (--ipam=kubernetes): the manager takes every
	// change, and the one made between construction and subscription.
	var unsubscribe func()
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			m.LocalUpdated(node.FromLocalNode(p.Local.Get()))
			p.Jobs.Add(m.Start()...)
			unsubscribe = p.Local.Subscribe(func(l localnode.LocalNode) { m.LocalUpdated(node.FromLocalNode(l)) })
			m.LocalUpdated(node.FromLocalNode(p.Local.Get()))
			p.Health.OK("local node " + m.LocalNode().GetKeyName())
			return nil
		},
		OnStop: func(cell.HookContext) error {
			if unsubscribe != nil {
				unsubscribe()
			}
			return nil
		},
	})
	return m
}
