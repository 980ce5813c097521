package ipcache

import (
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
)

// Cell provides the IPCache, its listeners' value group
// ("ipcache-listeners"), GET /v1/ipcache and GET /v1/ipcache/{ip}, and the
// "IPCache" status line. It needs an identity.Allocator, the
// identity.ClusterConfig and the LocalNode (the node manager provides
// it); with an enabled kvstore.Client it publishes local endpoints and
// watches the cluster's entries.
var Cell = cell.Module("ipcache", "IP to identity cache",
	cell.ProvidePrivate(newCacheFromParams),
	cell.Provide(
		func(c *cache) IPCache { return c },
		newStatusProvider,
		newListHandler,
		newGetHandler,
	),
	cell.Invoke(func(IPCache) {}),
)

type params struct {
	cell.In

	Log       *slog.Logger
	Lifecycle cell.Lifecycle
	Jobs      job.Group
	Allocator identity.Allocator
	Cluster   identity.ClusterConfig
	LocalNode LocalNode
	KVStore   kvstore.Client `optional:"true"`
	KVConfig  kvstore.Config `optional:"true"`
	Metrics   *store.Metrics `optional:"true"`
	Listeners []Listener     `group:"ipcache-listeners"`
}

// newCacheFromParams allocates the cache; its worker and kvstore jobs
// start with the hive.
func newCacheFromParams(p params) *cache {
	c := newCache(p.Log, p.Allocator, p.Listeners)
	c.local, c.cluster = p.LocalNode, p.Cluster
	if p.KVStore != nil && p.KVStore.Enabled() {
		c.kv = newKVSync(c, p.KVStore, p.Cluster, p.Log, p.Metrics, p.KVConfig.KVStorePeriodicSync)
	}
	p.Lifecycle.Append(cell.Hook{
		// The jobs are added at start, after the kvstore client (a
		// dependency, so started earlier) has connected.
		OnStart: func(cell.HookContext) error {
			p.Jobs.Add(job.OneShot("resolve", c.run))
			if c.kv != nil {
				c.kv.start(p.Jobs)
			}
			return nil
		},
	})
	return c
}
