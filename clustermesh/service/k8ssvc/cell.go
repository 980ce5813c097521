package k8ssvc

import (
	"context"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/clustermesh/service/svcpublish"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
)

// Cell watches the Kubernetes Services and EndpointSlices into the
// service manager (when the hive has one: every service), the
// global service cache and, on the cluster's publisher, publishes the
// shared global services in the cluster's etcd. It needs the Kubernetes
// client cell, the clustermesh cell (the cache) and the publish cell;
// without Kubernetes it does nothing, without a kvstore it publishes
// nothing.
var Cell = cell.Module("clustermesh-k8s-services", "Kubernetes global services into the service cache and etcd",
	cell.Invoke(start),
)

// SyncName is the name of the watcher's cache in the CacheSync gate.
const SyncName = "clustermesh-k8s-services"

type params struct {
	cell.In

	Clientset      k8s.Clientset
	Services       k8s.Services
	EndpointSlices k8s.EndpointSlices
	CacheSync      k8s.CacheSync
	Cache          *service.Cache
	Leadership     publish.Leadership
	Cluster        cluster.Info
	KVStore        kvstore.Client `optional:"true"`
	// Manager gets every Service, global or not, with its slices.
	Manager *svcmanager.Manager `optional:"true"`
	Metrics *store.Metrics      `optional:"true"`
	Jobs    job.Group
	Log     *slog.Logger
}

func start(p params) {
	if !p.Clientset.IsEnabled() {
		return
	}
	var w *svcpublish.Writer
	if p.KVStore != nil && p.KVStore.Enabled() {
		w = svcpublish.NewWriter(p.KVStore, p.Cluster, p.Leadership, p.Log, p.Metrics)
	}
	wt := NewWatcher(p.Cache, w, p.Cluster, p.Manager)
	markSynced := p.CacheSync.Register(SyncName)
	synced := make(chan struct{})
	p.Jobs.Add(job.OneShot("k8s-watch-services", func(ctx context.Context, health cell.Health) error {
		wt.run(ctx, p.Services.Events(ctx), p.EndpointSlices.Events(ctx), func() {
			markSynced()
			close(synced)
			health.OK("synced")
		})
		return nil
	}))
	if w != nil {
		p.Jobs.Add(job.OneShot("publish-global-services", func(ctx context.Context, _ cell.Health) error {
			w.Run(ctx, synced)
			return nil
		}))
	}
}
