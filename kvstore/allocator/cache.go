package allocator

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
)

// Entry is a valid master key of the cache.
type Entry[V any] struct {
	ID    ID
	Key   string
	Value V
}

// MasterKey is a valid master key <base>/id/<id> => key as a watch store
// of the master keys holds it, with its decoded value.
type MasterKey[V any] interface {
	store.Key
	// Master returns the id, the key (the master key's value) and the
	// decoded value.
	Master() (id ID, key string, value V)
}

// MasterWatcher watches the master keys for the cache (Options.Watcher).
type MasterWatcher interface {
	// Watch lists and watches the master keys on backend until ctx ends.
	Watch(ctx context.Context, backend kvstore.Backend)
	// Store is the watcher's watch store.
	Store() *store.WatchStore
}

// cacheEntry is a valid master key as the cache holds it. The watch
// store skips (and reports) the others; their ids stay occupied.
type cacheEntry[V any] struct {
	name  string
	id    ID
	key   string
	value V
}

// GetKeyName returns the master key's name below <base>/id/.
func (e *cacheEntry[V]) GetKeyName() string { return e.name }

// Master implements MasterKey.
func (e *cacheEntry[V]) Master() (ID, string, V) { return e.id, e.key, e.value }

// entryOf returns the cache entry of a watch store's key.
func entryOf[V any](k store.Key) *cacheEntry[V] {
	if e, ok := k.(*cacheEntry[V]); ok {
		return e
	}
	e := &cacheEntry[V]{name: k.GetKeyName()}
	e.id, e.key, e.value = k.(MasterKey[V]).Master()
	return e
}

// ownWatcher is the cache's own watcher of the master keys, decoding
// with Options.Decode.
type ownWatcher struct {
	ws     *store.WatchStore
	prefix string
}

func (w ownWatcher) Watch(ctx context.Context, b kvstore.Backend) { w.ws.Watch(ctx, b, w.prefix) }
func (w ownWatcher) Store() *store.WatchStore                     { return w.ws }

// cache mirrors <base>/id/ through a MasterWatcher.
type cache[V any] struct {
	a       *Allocator[V]
	watcher MasterWatcher
	ws      *store.WatchStore

	mu       sync.RWMutex
	byName   map[string]*cacheEntry[V]
	byID     map[ID]*cacheEntry[V]
	byKey    map[string]ID
	keyCount map[string]int // entries per key (normally 1)
	synced   chan struct{}
}

var _ store.Observer = (*cache[string])(nil)

func newCache[V any](a *Allocator[V]) *cache[V] {
	c := &cache[V]{
		a: a, byName: map[string]*cacheEntry[V]{}, byID: map[ID]*cacheEntry[V]{},
		byKey: map[string]ID{}, keyCount: map[string]int{}, synced: make(chan struct{}),
	}
	onSync := store.WithOnSync(func(context.Context) {
		close(c.synced)
		if fn := a.opts.Events.Synced; fn != nil {
			fn()
		}
	})
	if a.opts.Watcher != nil {
		c.watcher = a.opts.Watcher(c, onSync)
	} else {
		ws := store.NewWatchStore(a.opts.Scope, store.KeyFactoryFunc(c.decode), c,
			store.WithLogger(a.log), store.WithMetrics(a.opts.Metrics), onSync)
		c.watcher = ownWatcher{ws: ws, prefix: a.paths.IDPrefix()}
	}
	c.ws = c.watcher.Store()
	return c
}

// CheckMaster checks a master key <base>/id/<name> => value as the
// cache takes it: a name that is no canonical decimal id, id 0 and an
// empty value are malformed (errors of no kind). It returns the id; a
// MasterWatcher's decoding starts with it.
func CheckMaster(name string, value []byte) (ID, error) {
	n, err := strconv.ParseUint(name, 10, 64)
	switch {
	case err != nil || strconv.FormatUint(n, 10) != name:
		return 0, fmt.Errorf("master key name %q is not a decimal id", name)
	case n == 0:
		return 0, fmt.Errorf("master key name %q: id 0 is never allocated", name)
	case len(value) == 0:
		return 0, fmt.Errorf("id %d: empty value", n)
	}
	return ID(n), nil
}

// decode is the watch store's KeyFactory of the cache's own watcher:
// CheckMaster, then Decode, whose error says the kind of the others it
// refuses.
func (c *cache[V]) decode(name string, value []byte) (store.Key, error) {
	id, err := CheckMaster(name, value)
	if err != nil {
		return nil, err
	}
	e := &cacheEntry[V]{name: name, id: id, key: string(value)}
	if e.value, err = c.a.opts.Decode(e.id, e.key); err != nil {
		return nil, err
	}
	return e, nil
}

// OnUpdate indexes a new or changed entry and tells the events.
func (c *cache[V]) OnUpdate(k store.Key) { c.OnChanges([]store.Change{{Key: k}}) }

// OnDelete forgets an entry and tells the events.
func (c *cache[V]) OnDelete(k store.Key) { c.OnChanges([]store.Change{{Key: k, Deleted: true}}) }

// cacheEvent is a change of the cache for the events: a deleted or an
// upserted entry.
type cacheEvent[V any] struct {
	e       *cacheEntry[V]
	deleted bool
}

// OnChanges indexes a batch of changes under one lock, then tells the
// events, in order.
func (c *cache[V]) OnChanges(changes []store.Change) {
	events := make([]cacheEvent[V], 0, len(changes))
	c.mu.Lock()
	for _, ch := range changes {
		e := entryOf[V](ch.Key)
		if prev := c.unindexLocked(e.name); prev != nil {
			events = append(events, cacheEvent[V]{e: prev, deleted: true})
		}
		if ch.Deleted {
			continue
		}
		c.byName[e.name] = e
		c.byID[e.id] = e
		if _, ok := c.byKey[e.key]; !ok {
			c.byKey[e.key] = e.id
		}
		c.keyCount[e.key]++
		events = append(events, cacheEvent[V]{e: e})
	}
	c.mu.Unlock()
	ev := c.a.opts.Events
	for _, x := range events {
		switch {
		case x.deleted && ev.Delete != nil:
			ev.Delete(x.e.id, x.e.value)
		case !x.deleted && ev.Upsert != nil:
			ev.Upsert(x.e.id, x.e.value)
		}
	}
}

var _ store.BatchObserver = (*cache[string])(nil)

// unindexLocked removes the entry named name from every index.
func (c *cache[V]) unindexLocked(name string) *cacheEntry[V] {
	prev, ok := c.byName[name]
	if !ok {
		return nil
	}
	delete(c.byName, name)
	if c.byID[prev.id] == prev {
		delete(c.byID, prev.id)
	}
	c.keyCount[prev.key]--
	if c.keyCount[prev.key] > 0 {
		if c.byKey[prev.key] == prev.id {
			c.byKey[prev.key] = c.otherIDLocked(prev.key)
		}
		return prev
	}
	delete(c.keyCount, prev.key)
	delete(c.byKey, prev.key)
	return prev
}

// otherIDLocked finds the lowest id of another entry for key; it only
// runs when two masters hold the same key.
func (c *cache[V]) otherIDLocked(key string) ID {
	var best ID
	for id, e := range c.byID {
		if e.key == key && (best == 0 || id < best) {
			best = id
		}
	}
	return best
}

func (c *cache[V]) lookupKey(key string) (ID, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	id, ok := c.byKey[key]
	return id, ok
}

// keyOf returns the key of a valid master.
func (c *cache[V]) keyOf(id ID) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.byID[id]
	if !ok {
		return "", false
	}
	return e.key, true
}

// occupied reports whether a master key exists for id, valid or skipped.
func (c *cache[V]) occupied(id ID) bool {
	c.mu.RLock()
	_, ok := c.byID[id]
	c.mu.RUnlock()
	return ok || c.ws.IsSkipped(id.String())
}

// Run watches the master keys until ctx ends, and writes references lost
// with an expired session lease again. Run it once per allocator (a job
// of the owning cell).
func (a *Allocator[V]) Run(ctx context.Context) {
	a.leaseOnce.Do(func() {
		a.opts.Backend.OnLeaseExpired(a.paths.ValuesPrefix(), a.onLeaseExpired)
	})
	var wg sync.WaitGroup
	wg.Go(func() { a.recreateExpired(ctx) })
	a.cache.watcher.Watch(ctx, a.opts.Backend)
	wg.Wait()
}

// Synced reports whether the cache has listed the master keys once.
func (a *Allocator[V]) Synced() bool { return a.cache.ws.Synced() }

// WaitForSync waits until the cache has listed the master keys once.
func (a *Allocator[V]) WaitForSync(ctx context.Context) error {
	select {
	case <-a.cache.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the %s cache: %w", a.opts.Scope, context.Cause(ctx))
	}
}

// Lookup returns the id of key from the cache.
func (a *Allocator[V]) Lookup(key string) (ID, bool) { return a.cache.lookupKey(key) }

// Get returns the decoded value of a valid master key from the cache.
func (a *Allocator[V]) Get(id ID) (V, bool) {
	a.cache.mu.RLock()
	defer a.cache.mu.RUnlock()
	e, ok := a.cache.byID[id]
	if !ok {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Entries returns the valid master keys of the cache, sorted by id.
func (a *Allocator[V]) Entries() []Entry[V] {
	a.cache.mu.RLock()
	out := make([]Entry[V], 0, len(a.cache.byID))
	for id, e := range a.cache.byID {
		out = append(out, Entry[V]{ID: id, Key: e.key, Value: e.value})
	}
	a.cache.mu.RUnlock()
	slices.SortFunc(out, func(x, y Entry[V]) int { return cmp.Compare(x.ID, y.ID) })
	return out
}

// NumEntries returns the number of valid master keys in the cache.
func (a *Allocator[V]) NumEntries() int {
	a.cache.mu.RLock()
	defer a.cache.mu.RUnlock()
	return len(a.cache.byName)
}

// Invalid returns the master keys the cache skips now, sorted by key. A
// valid master key that turned invalid is listed and keeps its last
// valid value.
func (a *Allocator[V]) Invalid() []store.SkippedEntry { return a.cache.ws.Skipped() }
