package ipcachesync

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Cell writes the ipcache to the BPF ipcache map: it needs a
// datapath.IPCacheMapWriter (the loader cell) and the ipcache; with the
// endpoint manager in the hive, the initial reconcile also waits until
// the restored endpoints are back in the ipcache, and with a RemoteSync
// until the remote clusters synced. It adds the "IPCache map" status
// line.
var Cell = cell.Module("ipcache-map-sync", "Writes the ipcache to the BPF ipcache map",
	cell.ProvidePrivate(newSyncer),
	cell.Provide(
		func(s *syncer) ipcache.ListenerOut { return ipcache.ListenerOut{Listener: s.Syncer} },
		newStatusProvider,
	),
	cell.Invoke(startSyncer),
)

// flushDelay and flushMax coalesce bursts of ipcache changes into one
// batch; retryInterval is how often a failed write is retried (in full).
const (
	flushDelay    = 5 * time.Millisecond
	flushMax      = 100 * time.Millisecond
	retryInterval = 10 * time.Second
)

// syncer is the Syncer with the trigger that flushes it.
type syncer struct {
	*Syncer
	trigger *job.Trigger
}

func newSyncer(w datapath.IPCacheMapWriter, log *slog.Logger) *syncer {
	sy := &syncer{}
	sy.Syncer = New(w, nil, log, func() { sy.trigger.Trigger("ipcache changed") })
	sy.trigger = job.NewTrigger("ipcache-map-flush", func(ctx context.Context, _ []string) error { return sy.Flush(ctx) },
		job.TriggerParams{After: flushDelay, Max: flushMax})
	return sy
}

type startParams struct {
	cell.In

	Syncer    *syncer
	IPCache   ipcache.IPCache
	Endpoints *endpoint.Manager   `optional:"true"`
	Remotes   datapath.RemoteSync `optional:"true"`
	K8sCaches k8s.CacheSync       `optional:"true"`
	Jobs      job.Group
	Log       *slog.Logger
}

// startSyncer gives the syncer its cache and adds the jobs: the flush
// trigger, the initial reconcile and the retry of failed writes.
func startSyncer(p startParams) {
	s, t := p.Syncer.Syncer, p.Syncer.trigger
	s.SetIPCache(p.IPCache)
	initial := job.OneShot("ipcache-map-reconcile", func(ctx context.Context, health cell.Health) error {
		health.OK("waiting for the ipcache's initial sync")
		if err := p.IPCache.WaitForInitialSync(ctx); err != nil {
			return err
		}
		if p.Remotes != nil {
			health.OK("waiting for the remote clusters' sync")
			if err := p.Remotes.WaitForRemotesSynced(ctx); err != nil {
				if ctx.Err() != nil {
					return err
				}
				p.Log.Warn("Reconciling the BPF ipcache map without every remote cluster synced", "error", err)
			}
		}
		if p.K8sCaches != nil {
			// Returns at the latest when --k8s-sync-timeout passed.
			health.OK("waiting for the Kubernetes caches' sync")
			if err := p.K8sCaches.WaitForCacheSync(ctx); err != nil {
				return err
			}
		}
		if p.Endpoints != nil {
			health.OK("waiting for the restored endpoints' identities")
			if err := p.Endpoints.WaitForRestore(ctx); err != nil {
				return err
			}
		}
		if err := s.Reconcile(ctx); err != nil {
			return err
		}
		t.Trigger("reconciled")
		health.OK("reconciled")
		return nil
	}, job.WithRetry(-1, job.Backoff{Min: time.Second, Max: time.Minute}))
	retry := job.Timer("ipcache-map-retry", func(ctx context.Context) error {
		if !s.NeedsResync() || !s.Stats().Reconciled {
			return nil
		}
		if err := s.Flush(ctx); err != nil {
			return fmt.Errorf("retry: %w", err)
		}
		return nil
	}, retryInterval)
	p.Jobs.Add(t, initial, retry)
}
