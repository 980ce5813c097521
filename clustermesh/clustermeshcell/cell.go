package clustermeshcell

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh"
	"github.com/apiary-net/apiary/clustermesh/remote"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Cell provides the mesh: with --clustermesh-config set it watches the
// directory and keeps one connection per remote cluster, feeding the node
// manager, the ipcache and the identity cache. It provides SyncWaiter,
// the global service cache (*service.Cache, which the local cluster's
// watchers feed too),
// the "ClusterMesh" status line, GET /v1/cluster/mesh, GET /v1/service
// and metrics; with a service manager in the hive, it feeds it the
// remote clusters' backends of the global services.
var Cell = cell.Module("clustermesh", "ClusterMesh: remote cluster connections",
	cell.Config(clustermesh.DefaultConfig),
	cell.ProvidePrivate(newClusterMesh),
	cell.Provide(
		func(cm *clustermesh.ClusterMesh) SyncWaiter { return cm },
		func(cm *clustermesh.ClusterMesh) *service.Cache { return cm.Services() },
		newStatusProvider,
		newStatusHandler,
		newServiceListHandler,
		newMetricsOut,
	),
	cell.Invoke(func(*clustermesh.ClusterMesh) {}, feedServiceManager),
)

// SyncWaiter holds the first endpoint regeneration until every remote
// cluster synced, or --clustermesh-sync-timeout passed.
type SyncWaiter interface {
	// WaitForRemotesSynced returns nil when every remote configured at
	// start has synced, clustermesh.ErrSyncTimeout after the timeout
	// (logged once; carry on), or the context's error.
	WaitForRemotesSynced(ctx context.Context) error
}

type params struct {
	cell.In

	Config     clustermesh.Config
	Cluster    cluster.Info
	Nodes      node.Manager
	IPCache    ipcache.IPCache
	Identities identitycache.RemoteIdentities
	Registry   controller.Registry
	Lifecycle  cell.Lifecycle
	Module     cell.FullModuleID
	Metrics    *store.Metrics `optional:"true"`
	// Remote are the timings of the connections (tests shorten them).
	Remote remote.Options `optional:"true"`
	Jobs   job.Group
	Log    *slog.Logger
	Health cell.Health
	Status status.Refresher `optional:"true"`
}

func newClusterMesh(p params) *clustermesh.ClusterMesh {
	cm := clustermesh.New(clustermesh.Params{
		Config: p.Config, Local: p.Cluster, Nodes: p.Nodes, IPCache: p.IPCache, Identities: p.Identities,
		Controllers: p.Registry.NewManager(controller.ManagerParams{
			Health: remoteHealth{p.Health}, Lifecycle: p.Lifecycle, Logger: p.Log, Module: p.Module,
		}),
		Log: p.Log, Metrics: p.Metrics, Remote: p.Remote,
		OnChange: func() {
			// The ClusterMesh line changes with a cluster's readiness:
			// show it now, not at the next probe round.
			if p.Status != nil {
				p.Status.Refresh()
			}
		},
	})
	if !cm.Enabled() {
		p.Health.Stopped("disabled: --clustermesh-config is empty")
		return cm
	}
	p.Jobs.Add(job.OneShot("clustermesh-config-watch", func(ctx context.Context, _ cell.Health) error {
		return cm.Run(ctx)
	}))
	return cm
}

// remoteHealth is the health of the remote-etcd-<cluster> controllers: a
// remote cluster that cannot be reached is not this agent failing (its
// liveness probe must not restart it for that), so their failures are
// reported as OK with the reason; the ClusterMesh status line is a
// Warning that says why, and the controllers' status counts failures.
type remoteHealth struct{ cell.Health }

// Degraded reports the failure without degrading the agent.
func (h remoteHealth) Degraded(reason string, err error) {
	h.Health.OK(fmt.Sprintf("remote cluster unavailable: %s: %v", reason, err))
}

// NewScope returns a child scope of the same kind.
func (h remoteHealth) NewScope(name string) cell.Health { return remoteHealth{h.Health.NewScope(name)} }

type feedParams struct {
	cell.In

	Cache   *service.Cache
	Cluster cluster.Info
	Manager *svcmanager.Manager `optional:"true"`
	Status  status.Refresher    `optional:"true"`
}

// feedServiceManager hands the remote clusters' backends of every global
// service to the service manager, when the hive has one; the manager
// uses them for the local services that are global. Every change of a
// global service also has the status lines probed again, so the
// ClusterMesh line's "N global-services" follows at once.
func feedServiceManager(p feedParams) {
	if p.Manager == nil && p.Status == nil {
		return
	}
	p.Cache.Subscribe(func(nn string) {
		if p.Manager != nil {
			p.Manager.SetRemoteBackends(nn, service.RemoteBackends(p.Cache.Get(nn), p.Cluster.ClusterName))
		}
		if p.Status != nil {
			p.Status.Refresh()
		}
	})
}
