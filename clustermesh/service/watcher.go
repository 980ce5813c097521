package service

import (
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
)

// WatcherParams configure a ClusterWatcher.
type WatcherParams struct {
	// Cache gets the cluster's shared services.
	Cache *Cache
	// Cluster is the remote cluster: every entry must name it and its id.
	Cluster cluster.Info
	// WatchParams are the watch store's scope, prefix (default
	// layout.ServicesClusterPrefix; a KVStoreMesh cache serves
	// cilium/cache/services/v1/<cluster>), logger, metrics and options.
	store.WatchParams
}

// ClusterWatcher mirrors a remote cluster's services into the cache.
// Malformed entries and entries of another cluster (ErrForeignService)
// are skipped, counted and listed by its watch store.
type ClusterWatcher struct {
	*store.PrefixWatcher[*ClusterService]
	p WatcherParams
}

// NewClusterWatcher returns a watcher; Watch runs it.
func NewClusterWatcher(p WatcherParams) *ClusterWatcher {
	w := &ClusterWatcher{p: p}
	w.PrefixWatcher = store.NewPrefixWatcher(layout.ServicesClusterPrefix(p.Cluster.ClusterName), &w.p.WatchParams, w.decode,
		store.ObserverOf[*ClusterService]{
			Update: w.p.Cache.Upsert,
			Delete: func(s *ClusterService) { w.p.Cache.Delete(w.p.Cluster.ClusterName, s.GetKeyName()) },
		})
	return w
}

// decode is the watcher's Decoder.
func (w *ClusterWatcher) decode(name string, value []byte) (*ClusterService, error) {
	s, err := Decode(name, value)
	if err == nil {
		err = s.CheckCluster(w.p.Cluster)
	}
	return s, err
}
