package remote

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/source"
)

// prefixes is where a remote serves its prefixes: kvstore/layout's state
// prefixes (its own writers), or, with the cached capability, a
// KVStoreMesh cache's layout.StateToCache(prefix)/<cluster>; the canaries
// are named after the prefixes' bases (Cilium's adapter).
type prefixes struct {
	cached                     bool
	nodes, ipcache, identities string // watched prefixes
	canaryNodes, canaryIPCache string
	canaryIdentities           string
	services, canaryServices   string
}

func newPrefixes(cluster string, cached bool) prefixes {
	if !cached {
		return prefixes{nodes: layout.NodesClusterPrefix(cluster), ipcache: layout.IPDefaultPrefix, identities: layout.IdentitiesIDPrefix,
			canaryNodes: layout.CanaryNodes, canaryIPCache: layout.CanaryIPCache, canaryIdentities: layout.CanaryIdentities,
			services: layout.ServicesClusterPrefix(cluster), canaryServices: layout.CanaryServices}
	}
	cache := layout.StateToCache
	return prefixes{cached: true,
		nodes: cache(layout.NodesPrefix) + "/" + cluster, ipcache: cache(layout.IPPrefix) + "/" + cluster,
		identities:  cache(layout.IdentitiesPrefix) + "/" + cluster + "/" + layout.AllocatorIDDir,
		canaryNodes: cache(layout.CanaryNodes), canaryIPCache: cache(layout.CanaryIPCache), canaryIdentities: cache(layout.CanaryIdentities),
		services: cache(layout.ServicesPrefix) + "/" + cluster, canaryServices: cache(layout.CanaryServices)}
}

// watchers are the watchers of one remote cluster. They outlive a
// connection: run starts them on each new backend, and what they hold
// stays while disconnected.
type watchers struct {
	layout     prefixes
	nodes      *node.ClusterWatcher
	ipcache    *ipcache.ClusterWatcher
	identities *identitycache.ClusterWatcher
	services   *service.ClusterWatcher
	// all are the four with their canaries, in the order of the status.
	all      []canaryWatcher
	onSynced func()

	mu      sync.Mutex
	started map[string]bool // canary -> watcher started on the current backend
	synced  int
}

// canaryWatcher is a watcher and the sync canary that starts it.
type canaryWatcher struct {
	canary string
	store.Watcher
}

func newWatchers(p Params, cluster cluster.Info, l prefixes, onSynced func()) *watchers {
	w := &watchers{layout: l, onSynced: onSynced, started: map[string]bool{}}
	opt := store.WithOnSync(func(context.Context) { w.prefixSynced() })
	params := func(kind, prefix string) store.WatchParams {
		return store.WatchParams{Scope: cluster.ClusterName + "/" + kind, Prefix: prefix, Log: p.Log, Metrics: p.Metrics,
			Options: []store.WatchStoreOption{opt}}
	}
	w.nodes = node.NewClusterWatcher(node.WatcherParams{
		Manager: p.Nodes, Cluster: cluster, Source: source.ClusterMesh, WatchParams: params("nodes", l.nodes)})
	w.ipcache = ipcache.NewClusterWatcher(ipcache.WatcherParams{
		IPCache: p.IPCache, Cluster: cluster, Source: source.ClusterMesh, WatchParams: params("ipcache", l.ipcache)})
	w.identities = p.Identities.NewWatcher(cluster, l.identities, p.Log, p.Metrics, opt)
	w.services = service.NewClusterWatcher(service.WatcherParams{
		Cache: p.Services, Cluster: cluster, WatchParams: params("services", l.services)})
	w.all = []canaryWatcher{{l.canaryNodes, w.nodes}, {l.canaryIPCache, w.ipcache},
		{l.canaryIdentities, w.identities}, {l.canaryServices, w.services}}
	return w
}

// prefixSynced counts watchers whose first list is done; the last one
// makes the cluster ready.
func (w *watchers) prefixSynced() {
	w.mu.Lock()
	w.synced++
	all := w.synced == len(w.all)
	w.mu.Unlock()
	if all {
		w.onSynced()
	}
}

// allSynced reports whether every watcher listed its prefix once.
func (w *watchers) allSynced() bool {
	for _, cw := range w.all {
		if !cw.Store().Synced() {
			return false
		}
	}
	return true
}

// run starts the watchers on b until ctx ends: each once its sync canary
// exists (syncCanaries), or all at once.
func (w *watchers) run(ctx context.Context, b kvstore.Backend, cluster string, syncCanaries bool, log *slog.Logger) {
	var mgr store.WatchStoreManager
	if syncCanaries {
		mgr = store.NewWatchStoreManagerSync(b, cluster, log)
	} else {
		mgr = store.NewWatchStoreManagerImmediate()
	}
	w.mu.Lock()
	clear(w.started)
	w.mu.Unlock()
	for _, cw := range w.all {
		w.mu.Lock()
		w.started[cw.canary] = false
		w.mu.Unlock()
		mgr.Register(cw.canary, func(ctx context.Context) {
			w.mu.Lock()
			w.started[cw.canary] = true
			w.mu.Unlock()
			cw.Watch(ctx, b)
		})
	}
	mgr.Run(ctx)
}

// drain withdraws everything the watchers learned.
func (w *watchers) drain() {
	for _, cw := range w.all {
		cw.Drain()
	}
}

// prefixes reports each prefix: its canary, sync state, entries and
// skipped entries.
func (w *watchers) prefixes(cluster string, syncCanaries bool) []models.RemotePrefix {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]models.RemotePrefix, 0, len(w.all))
	for _, cw := range w.all {
		s := cw.Store()
		sk := s.SkipStats()
		r := models.RemotePrefix{Prefix: cw.Prefix(), Synced: s.Synced(), Entries: s.NumEntries(),
			Malformed: sk.Malformed, Refused: sk.Refused}
		if syncCanaries {
			r.Canary = layout.SyncedKey(cluster, cw.canary)
		}
		if sk.Total() > 0 {
			r.LastSkipped = fmt.Sprintf("%s: %v", sk.Last.Key, sk.Last.Err)
		}
		out = append(out, r)
	}
	return out
}

// waitingFor returns the first canary whose watcher has not started.
func (w *watchers) waitingFor() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, cw := range w.all {
		if started, ok := w.started[cw.canary]; ok && !started {
			return cw.canary
		}
	}
	return ""
}
