package identitycell

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/apiary-net/apiary/clustermesh/types"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// RemoteIdentities holds the identities of meshed clusters. Each remote
// cluster connection builds one RemoteWatcher on its backend; what the
// watchers learn joins the identity cache (LookupIdentityByID,
// GetIdentities, LookupIdentity of labels naming that cluster) and
// reaches the identity observers, the selector cache among them, exactly
// as this cluster's identities do, so cross-cluster selectors resolve.
type RemoteIdentities interface {
	// NewWatcher returns the watcher of the identities of a remote
	// cluster (its name, id and this mesh's size) under prefix (IDPrefix,
	// or a KVStoreMesh cache's cilium/cache/identities/v1/<cluster>/id);
	// opts are further options of its watch store (WithOnSync).
	NewWatcher(cluster types.ClusterInfo, prefix string, log *slog.Logger, metrics *store.Metrics, opts ...store.WatchStoreOption) *RemoteWatcher
}

// remoteCache is the part of the identity cache learned from remote
// clusters; ids are unique across the mesh (each cluster has its range).
type remoteCache struct {
	notify *notifier

	mu    sync.RWMutex
	byID  map[identity.NumericIdentity]*identity.Identity
	byKey map[string]identity.NumericIdentity
}

var _ RemoteIdentities = (*remoteCache)(nil)

func newRemoteCache(n *notifier) *remoteCache {
	return &remoteCache{notify: n, byID: map[identity.NumericIdentity]*identity.Identity{}, byKey: map[string]identity.NumericIdentity{}}
}

// apply adds, replaces and withdraws identities as a watch store's
// changes say, under one lock, and tells the observers once.
func (r *remoteCache) apply(changes []store.Change) {
	r.mu.Lock()
	for _, c := range changes {
		k := c.Key.(*remoteKey)
		if c.Deleted {
			if old, ok := r.byID[k.ident.ID]; ok {
				r.removeLocked(old)
			}
			continue
		}
		r.upsertLocked(k)
	}
	r.mu.Unlock()
	r.notify.flush()
}

func (r *remoteCache) upsertLocked(k *remoteKey) {
	ident := k.ident
	if old, ok := r.byID[ident.ID]; ok {
		if old.Labels.Equal(ident.Labels) {
			return
		}
		r.removeLocked(old)
	}
	r.byID[ident.ID] = ident
	r.byKey[k.labelsKey] = ident.ID
	r.notify.enqueue(identity.Change{Kind: identity.Added, Identity: ident})
}

func (r *remoteCache) removeLocked(old *identity.Identity) {
	delete(r.byID, old.ID)
	if key := kvstoreKey(old.Labels); r.byKey[key] == old.ID {
		delete(r.byKey, key)
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
	if id, ok := r.byKey[kvstoreKey(lbls)]; ok {
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

// NewWatcher implements RemoteIdentities.
func (r *remoteCache) NewWatcher(cluster types.ClusterInfo, prefix string, log *slog.Logger, metrics *store.Metrics,
	opts ...store.WatchStoreOption) *RemoteWatcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &RemoteWatcher{cache: r, cluster: cluster, prefix: prefix}
	w.watch = store.NewWatchStore(cluster.ClusterName+"/identities", store.KeyFactoryFunc(w.decode), w,
		append([]store.WatchStoreOption{store.WithLogger(log), store.WithMetrics(metrics)}, opts...)...)
	return w
}

// RemoteWatcher mirrors the master keys of a remote cluster's identities
// (cilium/state/identities/v1/id/<id>) into the identity cache. Watch may
// run again on another backend (a reconnect): identities that vanished
// meanwhile are withdrawn once the new list is complete. Ids outside the
// cluster's range and labels naming another cluster are refused, values
// that are no label list are malformed: both are skipped and counted by
// its watch store.
type RemoteWatcher struct {
	cache   *remoteCache
	cluster types.ClusterInfo
	prefix  string
	watch   *store.WatchStore
}

// IDPrefix is the prefix of the master keys.
const IDPrefix = KVStoreBasePath + "/id"

// Prefix is the watched prefix.
func (w *RemoteWatcher) Prefix() string { return w.prefix }

// Watch lists and watches the identities on backend until ctx ends.
func (w *RemoteWatcher) Watch(ctx context.Context, backend kvstore.Backend) {
	w.watch.Watch(ctx, backend, w.prefix)
}

// Drain withdraws every identity learned (a remote cluster removed).
func (w *RemoteWatcher) Drain() { w.watch.Drain() }

// Store is the watch store: entry counts, sync state, skipped entries.
func (w *RemoteWatcher) Store() *store.WatchStore { return w.watch }

func (w *RemoteWatcher) decode(name string, value []byte) (store.Key, error) {
	id, err := strconv.ParseUint(name, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: key %q: the last part is no identity number", ErrMalformed, name)
	}
	v := string(value)
	ident, err := DecodeKVStoreIdentity(w.cluster, id, v)
	if err != nil {
		return nil, err
	}
	return &remoteKey{name: name, ident: ident, labelsKey: kvstoreKeyOf(ident.Labels, v)}, nil
}

// OnUpdate adds or replaces an identity.
func (w *RemoteWatcher) OnUpdate(k store.Key) { w.cache.apply([]store.Change{{Key: k}}) }

// OnDelete withdraws an identity.
func (w *RemoteWatcher) OnDelete(k store.Key) { w.cache.apply([]store.Change{{Key: k, Deleted: true}}) }

// OnChanges applies a batch of changes with one lock and one delivery to
// the identity observers.
func (w *RemoteWatcher) OnChanges(changes []store.Change) { w.cache.apply(changes) }

var _ store.BatchObserver = (*RemoteWatcher)(nil)

// remoteKey is a decoded master key. labelsKey is the master key's
// value, the labels' canonical list: it indexes the identity by labels
// without building the list again.
type remoteKey struct {
	name      string
	ident     *identity.Identity
	labelsKey string
}

func (k *remoteKey) GetKeyName() string { return k.name }
