package identitycache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/source"
)

// globalBackend is where this cluster's global identities are agreed
// on: the kvstore allocator (*allocator.Allocator, mode kvstore) or the
// CiliumIdentity allocator (*CRDAllocator, mode crd).
type globalBackend interface {
	Allocate(ctx context.Context, key string) (allocator.ID, bool, error)
	Release(ctx context.Context, key string) (bool, error)
	LocalID(key string) (allocator.ID, bool)
	Synced() bool
	WaitForSync(ctx context.Context) error
}

// kvstoreGlobal allocates this cluster's global identities through a
// shared backend (the kvstore allocator, or CiliumIdentity objects) and
// keeps the identity cache: every identity of the
// cluster the backend's watch has seen, plus the ones in use on this
// node whose master the watch has not delivered yet. Observers hear of
// an identity when it becomes known by either way and of its deletion
// when it is known by neither.
type kvstoreGlobal struct {
	cfg    cluster.Info
	notify *notifier

	ready chan struct{} // closed once alloc is set
	alloc globalBackend

	mu    sync.RWMutex
	known map[identity.NumericIdentity]*knownIdentity
	byKey map[string]identity.NumericIdentity
}

type knownIdentity struct {
	identity *identity.Identity
	inCache  bool
	held     int // local references
}

func newKVStoreGlobal(cfg cluster.Info, n *notifier) *kvstoreGlobal {
	return &kvstoreGlobal{cfg: cfg, notify: n, ready: make(chan struct{}),
		known: map[identity.NumericIdentity]*knownIdentity{}, byKey: map[string]identity.NumericIdentity{}}
}

// events are the callbacks of the backend's cache.
func (g *kvstoreGlobal) events() allocator.Events[*identity.Identity] {
	return allocator.Events[*identity.Identity]{Upsert: g.onUpsert, Delete: g.onDelete, Synced: g.notify.flush}
}

// allocatorOptions are the options of the kvstore allocator of this
// cluster, without backend and suffix. Its cache reads the master keys
// through the cluster watcher a remote cluster's identities use, with
// source kvstore.
func (g *kvstoreGlobal) allocatorOptions(log *slog.Logger, metrics *store.Metrics) allocator.Options[*identity.Identity] {
	first, last := identity.ClusterRange(g.cfg)
	return allocator.Options[*identity.Identity]{
		BasePath: layout.IdentitiesPrefix,
		Min:      allocator.ID(first),
		Max:      allocator.ID(last),
		Scope:    "identities",
		Logger:   log,
		Metrics:  metrics,
		Watcher: func(observer store.BatchObserver, opts ...store.WatchStoreOption) allocator.MasterWatcher {
			return NewClusterWatcher(WatcherParams{Cluster: g.cfg, Source: source.KVStore, Observer: observer,
				WatchParams: store.WatchParams{Scope: "identities", Log: log, Metrics: metrics, Options: opts}})
		},
		Events: g.events(),
	}
}

// setAllocator makes the allocator available; it runs in the start hook.
func (g *kvstoreGlobal) setAllocator(a globalBackend) {
	g.alloc = a
	close(g.ready)
}

// allocator waits for the start hook.
func (g *kvstoreGlobal) allocator(ctx context.Context) (globalBackend, error) {
	select {
	case <-g.ready:
		return g.alloc, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the identity allocator to start: %w", context.Cause(ctx))
	}
}

// started returns the allocator, or nil before the start hook.
func (g *kvstoreGlobal) started() globalBackend {
	select {
	case <-g.ready:
		return g.alloc
	default:
		return nil
	}
}

func (g *kvstoreGlobal) allocate(ctx context.Context, lbls labels.Labels) (*identity.Identity, bool, error) {
	a, err := g.allocator(ctx)
	if err != nil {
		return nil, false, err
	}
	id, isNew, err := a.Allocate(ctx, kvstoreKey(lbls))
	if err != nil {
		return nil, false, fmt.Errorf("allocate identity for %s: %w", lbls, err)
	}
	ident := g.hold(identity.NumericIdentity(id), lbls)
	g.notify.flush()
	return ident, isNew, nil
}

func (g *kvstoreGlobal) release(ctx context.Context, ident *identity.Identity) (bool, error) {
	a, err := g.allocator(ctx)
	if err != nil {
		return false, err
	}
	key := kvstoreKey(ident.Labels)
	if id, ok := a.LocalID(key); !ok || identity.NumericIdentity(id) != ident.ID {
		return false, fmt.Errorf("release identity %d (%s): %w", ident.ID, ident.Labels, ErrNotAllocated)
	}
	last, err := a.Release(ctx, key)
	if err != nil {
		return false, fmt.Errorf("release identity %d: %w", ident.ID, err)
	}
	g.unhold(ident.ID)
	g.notify.flush()
	return last, nil
}

// hold counts a local reference and returns the known identity.
func (g *kvstoreGlobal) hold(id identity.NumericIdentity, lbls labels.Labels) *identity.Identity {
	g.mu.Lock()
	defer g.mu.Unlock()
	k, ok := g.known[id]
	if !ok {
		k = &knownIdentity{identity: &identity.Identity{ID: id, Labels: lbls}}
		g.addLocked(k)
	}
	k.held++
	return k.identity
}

func (g *kvstoreGlobal) unhold(id identity.NumericIdentity) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k, ok := g.known[id]
	if !ok {
		return
	}
	k.held--
	if k.held <= 0 && !k.inCache {
		g.removeLocked(k)
	}
}

func (g *kvstoreGlobal) onUpsert(_ allocator.ID, ident *identity.Identity) {
	g.mu.Lock()
	k, ok := g.known[ident.ID]
	switch {
	case !ok:
		k = &knownIdentity{identity: ident}
		g.addLocked(k)
	case !k.identity.Labels.Equal(ident.Labels):
		held := k.held
		g.removeLocked(k)
		k = &knownIdentity{identity: ident, held: held}
		g.addLocked(k)
	}
	k.inCache = true
	g.mu.Unlock()
	if a := g.started(); a != nil && a.Synced() {
		g.notify.flush()
	}
}

func (g *kvstoreGlobal) onDelete(_ allocator.ID, ident *identity.Identity) {
	g.mu.Lock()
	if k, ok := g.known[ident.ID]; ok {
		k.inCache = false
		if k.held <= 0 {
			g.removeLocked(k)
		}
	}
	g.mu.Unlock()
	if a := g.started(); a != nil && a.Synced() {
		g.notify.flush()
	}
}

func (g *kvstoreGlobal) addLocked(k *knownIdentity) {
	g.known[k.identity.ID] = k
	// The first identity of a label set stays the one found by its
	// labels: a duplicate (two agents created one at once, in mode crd)
	// comes later and goes first.
	key := kvstoreKey(k.identity.Labels)
	if _, dup := g.known[g.byKey[key]]; !dup || g.byKey[key] == k.identity.ID {
		g.byKey[key] = k.identity.ID
	}
	g.notify.enqueue(identity.Change{Kind: identity.Added, Identity: k.identity})
}

func (g *kvstoreGlobal) removeLocked(k *knownIdentity) {
	delete(g.known, k.identity.ID)
	key := kvstoreKey(k.identity.Labels)
	if g.byKey[key] == k.identity.ID {
		delete(g.byKey, key)
	}
	g.notify.enqueue(identity.Change{Kind: identity.Deleted, Identity: k.identity})
}

func (g *kvstoreGlobal) lookup(lbls labels.Labels) *identity.Identity {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if id, ok := g.byKey[kvstoreKey(lbls)]; ok {
		return g.known[id].identity
	}
	return nil
}

func (g *kvstoreGlobal) get(id identity.NumericIdentity) *identity.Identity {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if k, ok := g.known[id]; ok {
		return k.identity
	}
	return nil
}

func (g *kvstoreGlobal) list() []*identity.Identity {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*identity.Identity, 0, len(g.known))
	for _, k := range g.known {
		out = append(out, k.identity)
	}
	return out
}

// counts returns the number of known identities and of those in use here.
func (g *kvstoreGlobal) counts() (known, used int) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, k := range g.known {
		if k.held > 0 {
			used++
		}
	}
	return len(g.known), used
}
