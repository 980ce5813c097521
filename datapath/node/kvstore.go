package node

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/source"
)

// ErrForeignNode marks a kvstore node that claims another cluster than
// the one whose prefix it is under; the watch store skips it as refused.
var ErrForeignNode = store.KindError(store.ErrRefused, "node of another cluster")

// kvSync registers the local node and mirrors the cluster's nodes into
// the manager with source kvstore, through the same ClusterWatcher a
// remote cluster uses. The watch store hands its events to the
// SyncStore, which writes the local node's key again when another writer
// deletes or changes it.
type kvSync struct {
	m       *NodeManager
	client  kvstore.Client
	cluster cluster.Info
	log     *slog.Logger
	sync    *store.SyncStore
	watcher *ClusterWatcher
	watch   *store.WatchStore
}

func newKVSync(m *NodeManager, client kvstore.Client, cluster cluster.Info, log *slog.Logger, metrics *store.Metrics,
	periodicSync time.Duration) *kvSync {
	k := &kvSync{m: m, client: client, cluster: cluster, log: log}
	k.sync = store.NewSyncStore(cluster.ClusterName, client, layout.NodesPrefix,
		store.WithSyncLogger(log), store.WithSyncMetrics(metrics), store.WithPeriodicSync(periodicSync),
		store.WithOnConflict(k.onConflict))
	k.watcher = NewClusterWatcher(WatcherParams{
		Manager: m, Cluster: cluster, Source: source.KVStore, Skip: m.self.Name,
		WatchParams: store.WatchParams{Scope: "nodes", Log: log, Metrics: metrics, Writer: k.sync},
	})
	k.watch = k.watcher.Store()
	return k
}

// watchPrefix is the prefix of this cluster's nodes.
func (k *kvSync) watchPrefix() string { return k.watcher.Prefix() }

// start registers the local node and runs the writer and the watcher.
func (k *kvSync) start(local Node) []job.Job {
	k.register(local)
	return store.WriteAndWatchJobs("kvstore-register", k.sync, k.watcher, k.client)
}

// register writes the local node's key (again, after a change); the
// SyncStore retries a failed write.
func (k *kvSync) register(local Node) {
	if err := k.sync.UpsertKey(context.Background(), &local); err != nil {
		k.log.Warn("Unable to register the local node", "key", layout.NodeKey(local.Cluster, local.Name), "error", err)
	}
}

// skipped returns how many kvstore nodes are skipped now, and the last.
func (k *kvSync) skipped() (malformed, refused int, last string) {
	st := k.watch.SkipStats()
	if st.Total() > 0 {
		last = fmt.Sprintf("%s: %v", st.Last.Key, st.Last.Err)
	}
	return st.Malformed, st.Refused, last
}
