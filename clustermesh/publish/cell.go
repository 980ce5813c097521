package publish

import (
	"context"
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// Cell runs this agent's Publisher when a kvstore is configured: the
// agents of a cluster elect one, through a kvstore lock, that writes
// layout.ClusterConfigKey and the identities and services sync
// canaries, and keeps them. It provides Leadership.
var Cell = cell.Module("clustermesh-publish", "Cluster configuration and sync canaries for remote clusters",
	cell.Provide(newFromParams),
	cell.Invoke(func(Leadership) {}),
)

// Leadership tells whether this agent is the cluster's publisher.
type Leadership interface {
	// Leader reports whether this agent holds the publisher lock and
	// writes the cluster configuration.
	Leader() bool
	// LeaderState reports whether this agent leads and returns a channel
	// closed at the next change (nil: it never changes).
	LeaderState() (leader bool, changed <-chan struct{})
}

var _ Leadership = (*Publisher)(nil)

type params struct {
	cell.In

	Log       *slog.Logger
	Jobs      job.Group
	Health    cell.Health
	LocalNode localnode.Store
	KVStore   kvstore.Client `optional:"true"`
	// Kubernetes, when enabled, means the global services writer
	// (clustermesh/service/k8ssvc) writes the services canary.
	Kubernetes k8s.Clientset `optional:"true"`
	// ServicesCanary, when it says so, is the writer of the global
	// services of the sources without Kubernetes, which writes the
	// services canary.
	ServicesCanary ServicesCanary `optional:"true"`
}

// ServicesCanary is provided by the cell that publishes this cluster's
// global services without Kubernetes (clustermesh/service/svcpublish):
// when it runs, it writes the services sync canary once the services of
// its sources are written, so the publisher does not write it at once.
type ServicesCanary interface {
	// WritesServicesCanary reports whether that writer runs here.
	WritesServicesCanary() bool
}

// noLeader is the Leadership of an agent without a kvstore.
type noLeader struct{}

func (noLeader) Leader() bool { return false }

// LeaderState is false, for good.
func (noLeader) LeaderState() (bool, <-chan struct{}) { return false, nil }

func newFromParams(p params) (Leadership, error) {
	if p.KVStore == nil || !p.KVStore.Enabled() {
		p.Health.Stopped("disabled: no kvstore")
		return noLeader{}, nil
	}
	cluster := p.LocalNode.Get().Cluster
	standby := "standby: waiting for the publisher lock " + layout.PublisherLockKey(cluster.ClusterName)
	pub, err := New(Options{
		Backend: p.KVStore, Cluster: cluster, Log: p.Log,
		Retry: job.Backoff{Min: time.Second, Max: 30 * time.Second},
		NoServicesCanary: (p.Kubernetes != nil && p.Kubernetes.IsEnabled()) ||
			(p.ServicesCanary != nil && p.ServicesCanary.WritesServicesCanary()),
		OnLeadership: func(leader bool) {
			if leader {
				p.Health.OK("leader: publishing " + layout.ClusterConfigKey(cluster.ClusterName) + " and the sync canaries")
			} else {
				p.Health.OK(standby)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	p.Jobs.Add(job.OneShot("publish", func(ctx context.Context, _ cell.Health) error {
		p.Health.OK(standby)
		pub.Run(ctx)
		return nil
	}))
	return pub, nil
}
