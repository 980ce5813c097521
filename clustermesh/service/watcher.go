package service

import (
	"context"

	"github.com/apiary-net/apiary/clustermesh/types"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
)

// WatcherParams configure a ClusterWatcher.
type WatcherParams struct {
	// Cache gets the cluster's shared services.
	Cache *Cache
	// Cluster is the remote cluster: every entry must name it and its id.
	Cluster types.ClusterInfo
	// Prefix overrides the watched prefix (default
	// cilium/state/services/v1/<cluster>).
	Prefix string
	// WatchParams are the watch store's scope, logger, metrics and
	// options.
	store.WatchParams
}

// ClusterWatcher mirrors a remote cluster's services into the cache.
// Malformed entries and entries of another cluster (ErrForeignService)
// are skipped, counted and listed by its watch store.
type ClusterWatcher struct {
	p     WatcherParams
	watch *store.WatchStore
}

// NewClusterWatcher returns a watcher; Watch runs it.
func NewClusterWatcher(p WatcherParams) *ClusterWatcher {
	w := &ClusterWatcher{p: p}
	w.watch = w.p.NewWatchStore(store.KeyFactoryFunc(w.decode), store.ObserverFuncs{
		Update: func(k store.Key) { w.p.Cache.Upsert(k.(*ClusterService)) },
		Delete: func(k store.Key) { w.p.Cache.Delete(w.p.Cluster.ClusterName, k.GetKeyName()) },
	})
	return w
}

// Prefix is the watched prefix.
func (w *ClusterWatcher) Prefix() string {
	if w.p.Prefix != "" {
		return w.p.Prefix
	}
	return StorePrefix + "/" + w.p.Cluster.ClusterName
}

// Watch lists and watches the services on backend until ctx ends.
func (w *ClusterWatcher) Watch(ctx context.Context, backend kvstore.Backend) {
	w.watch.Watch(ctx, backend, w.Prefix())
}

// Drain withdraws every service learned (a remote cluster removed).
func (w *ClusterWatcher) Drain() { w.watch.Drain() }

// Store is the watch store: entry counts, sync state, skipped entries.
func (w *ClusterWatcher) Store() *store.WatchStore { return w.watch }

// decode is the watcher's KeyFactory.
func (w *ClusterWatcher) decode(name string, value []byte) (store.Key, error) {
	s, err := Decode(name, value)
	if err == nil {
		err = s.CheckCluster(w.p.Cluster)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}
