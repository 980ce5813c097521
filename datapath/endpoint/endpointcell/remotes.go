package endpointcell

import (
	"context"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/datapath"
)

// syncGate holds the endpoints' first regeneration (restored ones and
// those of policy changes) until something the policy depends on has
// synced: the remote clusters of ClusterMesh (or
// --clustermesh-sync-timeout), the Kubernetes caches (or
// --k8s-sync-timeout), so that no endpoint gets a policy computed without
// the identities or rules it should see. Endpoints created through the
// API in the meantime are regenerated at once.
type syncGate struct {
	job   string // the name of the job that waits
	what  string // what it waits for, for its health
	wait  func(ctx context.Context) error
	log   *slog.Logger
	ready chan struct{}
}

func newSyncGate(jobName, what string, wait func(context.Context) error, log *slog.Logger) *syncGate {
	g := &syncGate{job: jobName, what: what, wait: wait, log: log, ready: make(chan struct{})}
	if wait == nil {
		close(g.ready)
	}
	return g
}

// newRemotesGate waits for the remote clusters, when there is ClusterMesh.
func newRemotesGate(remotes datapath.RemoteSync, log *slog.Logger) *syncGate {
	var wait func(context.Context) error
	if remotes != nil {
		wait = remotes.WaitForRemotesSynced
	}
	return newSyncGate("endpoint-wait-for-remote-clusters", "the remote clusters' sync", wait, log)
}

// newK8sGate waits for the Kubernetes caches, when there is Kubernetes.
func newK8sGate(caches k8s.CacheSync, log *slog.Logger) *syncGate {
	var wait func(context.Context) error
	if caches != nil {
		wait = caches.WaitForCacheSync
	}
	return newSyncGate("endpoint-wait-for-k8s-caches", "the Kubernetes caches' sync", wait, log)
}

// jobFunc waits once and opens the gate.
func (g *syncGate) jobFunc() job.Job {
	return job.OneShot(g.job, func(ctx context.Context, health cell.Health) error {
		select {
		case <-g.ready:
			return nil
		default:
		}
		health.OK("waiting for " + g.what)
		if err := g.wait(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			g.log.Warn("Regenerating endpoints without "+g.what, "error", err)
		}
		close(g.ready)
		return nil
	})
}

// waitOpen returns when the gate is open or ctx ends.
func (g *syncGate) waitOpen(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// syncGates are waited for in turn.
type syncGates []*syncGate

func (gs syncGates) jobs() []job.Job {
	out := make([]job.Job, len(gs))
	for i, g := range gs {
		out[i] = g.jobFunc()
	}
	return out
}

func (gs syncGates) wait(ctx context.Context) error {
	for _, g := range gs {
		if err := g.waitOpen(ctx); err != nil {
			return err
		}
	}
	return nil
}
