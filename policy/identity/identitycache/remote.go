package identitycache

import (
	"log/slog"
	"slices"
	"strconv"
	"sync"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/source"
)

// RemoteIdentities holds the identities of meshed clusters. Each remote
// cluster connection builds one ClusterWatcher on its backend; what the
// watchers learn joins the identity cache (LookupIdentityByID,
// GetIdentities, LookupIdentity of labels naming that cluster) and
// reaches the identity observers, the selector cache among them, exactly
// as this cluster's identities do, so cross-cluster selectors resolve.
type RemoteIdentities interface {
	// NewWatcher returns the watcher of the identities of a remote
	// cluster (its name, id and this mesh's size) under prefix (layout.IdentitiesIDPrefix,
	// or a KVStoreMesh cache's cilium/cache/identities/v1/<cluster>/id);
	// opts are further options of its watch store (WithOnSync).
	NewWatcher(cluster cluster.Info, prefix string, log *slog.Logger, metrics *store.Metrics, opts ...store.WatchStoreOption) *ClusterWatcher
}

// remoteCache is the part of the identity cache learned from remote
// clusters; ids are unique across the mesh (each cluster has its range).
type remoteCache struct {
	notify *notifier
	labels *remoteLabels

	mu   sync.RWMutex
	byID map[identity.NumericIdentity]*identity.Identity
	// byKey indexes the identities by the hash of their labels'
	// canonical list (remoteLabels.sum), so that it holds no copy of the
	// list; the few lists whose hash another list has already are in
	// collided, by the list itself.
	byKey    map[uint64]identity.NumericIdentity
	collided map[string]identity.NumericIdentity
}

var _ RemoteIdentities = (*remoteCache)(nil)

func newRemoteCache(n *notifier) *remoteCache {
	return &remoteCache{notify: n, labels: newRemoteLabels(), byID: map[identity.NumericIdentity]*identity.Identity{},
		byKey: map[uint64]identity.NumericIdentity{}, collided: map[string]identity.NumericIdentity{}}
}

// OnChanges adds, replaces and withdraws identities as a cluster
// watcher's changes say, under one lock, and tells the observers once.
func (r *remoteCache) OnChanges(changes []store.Change) {
	r.mu.Lock()
	for _, c := range changes {
		if c.Deleted {
			// The key is the id (the watch store keeps no more of it).
			id, err := strconv.ParseUint(c.Key.GetKeyName(), 10, 32)
			if old, ok := r.byID[identity.NumericIdentity(id)]; ok && err == nil {
				r.removeLocked(old)
			}
			continue
		}
		r.upsertLocked(c.Key.(*MasterKey))
	}
	r.mu.Unlock()
	r.notify.flush()
}

func (r *remoteCache) upsertLocked(k *MasterKey) {
	ident := k.Identity
	if old, ok := r.byID[ident.ID]; ok {
		if old.Labels.Equal(ident.Labels) {
			return
		}
		r.removeLocked(old)
	}
	r.byID[ident.ID] = ident
	sum := k.labelsSum
	if sum == 0 { // not decoded by a remote watcher
		sum = r.labels.sum(kvstoreKey(ident.Labels))
	}
	r.indexLocked(sum, ident)
	r.notify.enqueue(identity.Change{Kind: identity.Added, Identity: ident})
}

// indexLocked makes ident the one found by its labels, whose canonical
// list hashes to sum.
func (r *remoteCache) indexLocked(sum uint64, ident *identity.Identity) {
	if id, ok := r.byKey[sum]; ok && id != ident.ID {
		if other := r.byID[id]; other != nil && !other.Labels.Equal(ident.Labels) {
			r.collided[kvstoreKey(ident.Labels)] = ident.ID
			return
		}
	}
	r.byKey[sum] = ident.ID
}

func (r *remoteCache) removeLocked(old *identity.Identity) {
	delete(r.byID, old.ID)
	key := kvstoreKey(old.Labels)
	if sum := r.labels.sum(key); r.byKey[sum] == old.ID {
		delete(r.byKey, sum)
	}
	if r.collided[key] == old.ID {
		delete(r.collided, key)
	}
	r.notify.enqueue(identity.Change{Kind: identity.Deleted, Identity: old})
}

func (r *remoteCache) get(id identity.NumericIdentity) *identity.Identity {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byID[id]
}

func (r *remoteCache) lookup(lbls labels.Labels) *identity.Identity {
	r.mu.RLock()
	defer r.mu.RUnlock()
	key := kvstoreKey(lbls)
	if id, ok := r.byKey[r.labels.sum(key)]; ok {
		if ident := r.byID[id]; ident != nil && ident.Labels.Equal(lbls) {
			return ident
		}
	}
	if id, ok := r.collided[key]; ok {
		return r.byID[id]
	}
	return nil
}

func (r *remoteCache) list() []*identity.Identity {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*identity.Identity, 0, len(r.byID))
	for _, id := range r.byID {
		out = append(out, id)
	}
	return out
}

func (r *remoteCache) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byID)
}

// NewWatcher implements RemoteIdentities: the cluster watcher of the
// remote's identities, with this cache as its observer. Its watch store
// keeps only the ids (store.WithNamesOnly): this cache holds the
// identities, and a removed one is found again by its id.
func (r *remoteCache) NewWatcher(cluster cluster.Info, prefix string, log *slog.Logger, metrics *store.Metrics,
	opts ...store.WatchStoreOption) *ClusterWatcher {
	opts = append(slices.Clip(opts), store.WithNamesOnly())
	return NewClusterWatcher(WatcherParams{Cluster: cluster, Source: source.ClusterMesh, Observer: r, remote: r.labels,
		WatchParams: store.WatchParams{Scope: cluster.ClusterName + "/identities", Prefix: prefix, Log: log, Metrics: metrics, Options: opts}})
}

// OnUpdate adds or replaces an identity.
func (r *remoteCache) OnUpdate(k store.Key) { r.OnChanges([]store.Change{{Key: k}}) }

// OnDelete withdraws an identity.
func (r *remoteCache) OnDelete(k store.Key) { r.OnChanges([]store.Change{{Key: k, Deleted: true}}) }

var _ store.BatchObserver = (*remoteCache)(nil)
