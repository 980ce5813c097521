package ipcachecell

import (
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Cell provides the ipcache.IPCache, its listeners' value group
// (ipcache.ListenerOut), GET /v1/ipcache and GET /v1/ipcache/{ip}, and the
// "IPCache" status line. It needs an identity.Allocator and the
// local-node store; with an enabled kvstore.Client it publishes local
// endpoints and watches the cluster's entries.
var Cell = cell.Module("ipcache", "IP to identity cache",
	cell.ProvidePrivate(newCacheFromParams),
	cell.Provide(
		func(c *ipcache.Cache) ipcache.IPCache { return c },
		newStatusProvider,
		newListHandler,
		newGetHandler,
	),
	cell.Invoke(func(ipcache.IPCache) {}),
)

type params struct {
	cell.In

	Log       *slog.Logger
	Jobs      job.Group
	Allocator identity.Allocator
	LocalNode localnode.Store
	KVStore   kvstore.Client     `optional:"true"`
	KVConfig  kvstore.Config     `optional:"true"`
	Metrics   *store.Metrics     `optional:"true"`
	Listeners []ipcache.Listener `group:"ipcache-listeners"`
}

// newCacheFromParams builds the cache; its jobs (the worker, the kvstore
// publisher and watcher) start after the hooks of the cells it needs,
// the kvstore client's connection among them.
func newCacheFromParams(p params) *ipcache.Cache {
	local := p.LocalNode.Get()
	c := ipcache.New(ipcache.Params{
		Log: p.Log, Allocator: p.Allocator, Listeners: p.Listeners,
		Local:   ipcache.LocalNode{Name: local.Name, IP: local.IP},
		Cluster: local.Cluster, KVStore: p.KVStore, Metrics: p.Metrics,
		PeriodicSync: p.KVConfig.KVStorePeriodicSync,
	})
	p.Jobs.Add(c.Jobs()...)
	return c
}
