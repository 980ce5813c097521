package svcpublish

import (
	"context"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
)

// Cell puts the global services of the service manager's sources in the
// global service cache and, on the cluster's publisher, publishes the
// shared ones in the cluster's etcd, when the agent runs without
// Kubernetes (with it, k8ssvc does). It provides publish.ServicesCanary.
var Cell = cell.Module("clustermesh-file-services", "Global services of the sources without Kubernetes into the service cache and etcd",
	cell.Provide(newMode),
	cell.Invoke(start),
)

// ModeParams are what decides whether Cell runs.
type ModeParams struct {
	cell.In

	Clientset k8s.Clientset       `optional:"true"`
	Manager   *svcmanager.Manager `optional:"true"`
	KVStore   kvstore.Client      `optional:"true"`
}

// mode says what Cell does in this agent.
type mode struct {
	feed    bool // no Kubernetes, a service manager: feed the cache
	publish bool // and a kvstore: publish
}

// WritesServicesCanary is true when the Writer runs.
func (m mode) WritesServicesCanary() bool { return m.publish }

var _ publish.ServicesCanary = mode{}

func modeOf(p ModeParams) mode {
	feed := (p.Clientset == nil || !p.Clientset.IsEnabled()) && p.Manager != nil
	return mode{feed: feed, publish: feed && p.KVStore != nil && p.KVStore.Enabled()}
}

func newMode(p ModeParams) publish.ServicesCanary { return modeOf(p) }

type params struct {
	cell.In
	ModeParams

	StateFile  svcmanagercell.StateFile `optional:"true"`
	Cache      *service.Cache
	Leadership publish.Leadership
	Cluster    cluster.Info
	Metrics    *store.Metrics `optional:"true"`
	Jobs       job.Group
	Log        *slog.Logger
}

func start(p params) {
	m := modeOf(p.ModeParams)
	if !m.feed {
		return
	}
	f := &feeder{cache: p.Cache, cluster: p.Cluster}
	if m.publish {
		f.writer = NewWriter(p.KVStore, p.Cluster, p.Leadership, p.Log, p.Metrics)
		p.Jobs.Add(job.OneShot("publish-global-services", func(ctx context.Context, _ cell.Health) error {
			if p.StateFile != nil {
				if err := p.StateFile.WaitRead(ctx); err != nil {
					return nil // stopping
				}
			}
			synced := make(chan struct{})
			close(synced)
			f.writer.Run(ctx, synced)
			return nil
		}))
	}
	// Kubernetes' services are k8ssvc's, which publishes them itself.
	p.Manager.Observe(f.apply, svcmanager.SourceFile)
}

// feeder hands the service manager's global services to the cache and
// the writer.
type feeder struct {
	cache   *service.Cache
	writer  *Writer // nil: no kvstore
	cluster cluster.Info
}

// apply puts a changed service in the cache and the writer, or
// withdraws it when it is gone or not global.
func (f *feeder) apply(c svcmanager.Change) {
	nn := c.NamespacedName
	var cs *service.ClusterService
	if c.Service != nil && c.Service.Global {
		cs = service.FromService(c.Service, f.cluster)
		f.cache.UpsertLocal(cs)
	} else {
		f.cache.Delete(f.cluster.ClusterName, nn)
	}
	if f.writer == nil {
		return
	}
	if cs != nil && cs.Shared {
		f.writer.Set(nn, cs)
	} else {
		f.writer.Set(nn, nil)
	}
}
