package ipcache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/source"
)

// ErrForeignIdentity marks a kvstore entry whose identity is not valid in
// this cluster (allocated by another cluster, or node-local); the watch
// store skips it as refused.
var ErrForeignIdentity = store.KindError(store.ErrRefused, "identity not valid in this cluster")

// kvSync publishes this node's endpoints through a SyncStore and mirrors
// the cluster's entries (other nodes') into the cache with source
// kvstore, through the same ClusterWatcher a remote cluster uses. The
// watch store hands its events to the SyncStore, which writes a local
// entry again when another writer deletes or changes it.
type kvSync struct {
	c       *Cache
	client  kvstore.Client
	log     *slog.Logger
	sync    *store.SyncStore
	watcher *ClusterWatcher
	watch   *store.WatchStore

	mu        sync.Mutex
	published map[string]struct{}
}

func newKVSync(c *Cache, client kvstore.Client, cluster cluster.Info, log *slog.Logger, m *store.Metrics,
	periodicSync time.Duration) *kvSync {
	k := &kvSync{c: c, client: client, log: log, published: map[string]struct{}{}}
	k.sync = store.NewSyncStore(cluster.ClusterName, client, layout.IPDefaultPrefix, store.WithSyncedKey(layout.CanaryIPCache),
		store.WithSyncLogger(log), store.WithSyncMetrics(m), store.WithPeriodicSync(periodicSync))
	k.watcher = NewClusterWatcher(WatcherParams{
		IPCache: c, Cluster: cluster, Source: source.KVStore, SkipHost: c.local.IP,
		WatchParams: store.WatchParams{Scope: "ipcache", Log: log, Metrics: m, Writer: k.sync,
			Options: []store.WatchStoreOption{store.WithOnSync(func(context.Context) { c.markInitialSync() })}},
	})
	k.watch = k.watcher.Store()
	return k
}

// jobs are the writer and the watcher.
func (k *kvSync) jobs() []job.Job {
	return store.WriteAndWatchJobs("kvstore-publish", k.sync, k.watcher, k.client)
}

func kvstoreResource(name string) ResourceID { return ResourceID("kvstore/" + name) }

// publish queues the write of a local entry.
func (k *kvSync) publish(p *IPIdentityPair) {
	if err := k.sync.UpsertKey(context.Background(), p); err != nil {
		k.log.Warn("Unable to publish a local ipcache entry", "key", layout.IPKey(layout.DefaultAddressSpace, p.GetKeyName()), "error", err)
		return
	}
	k.mu.Lock()
	k.published[p.GetKeyName()] = struct{}{}
	k.mu.Unlock()
}

// unpublish queues the deletion of a local entry.
func (k *kvSync) unpublish(p *IPIdentityPair) {
	k.sync.DeleteKey(context.Background(), p)
	k.mu.Lock()
	delete(k.published, p.GetKeyName())
	k.mu.Unlock()
}

// kvStats is what the status line says about the kvstore side.
type kvStats struct {
	published, malformed, refused int
	last                          string // the last skipped key and why
	conflicts                     []store.Conflict
	watchSynced, writeSynced      bool
}

func (k *kvSync) stats() kvStats {
	skipped := k.watch.SkipStats()
	st := kvStats{
		malformed: skipped.Malformed, refused: skipped.Refused,
		conflicts:   k.sync.Conflicts(),
		watchSynced: k.watch.Synced(), writeSynced: k.sync.IsSynced(),
	}
	if skipped.Total() > 0 {
		st.last = fmt.Sprintf("%s: %v", skipped.Last.Key, skipped.Last.Err)
	}
	k.mu.Lock()
	st.published = len(k.published)
	k.mu.Unlock()
	return st
}
