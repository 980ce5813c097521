package allocator

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/apiary-net/apiary/kvstore/store"
)

// Entry is a valid master key of the cache.
type Entry[V any] struct {
	ID    ID
	Key   string
	Value V
}

// cacheEntry is a valid master key as the watch store holds it. The
// watch store skips (and reports) the others; their ids stay occupied.
type cacheEntry[V any] struct {
	name  string
	id    ID
	key   string
	value V
}

// GetKeyName returns the master key's name below <base>/id/.
func (e *cacheEntry[V]) GetKeyName() string { return e.name }

// cache mirrors <base>/id/ through a WatchStore.
type cache[V any] struct {
	a  *Allocator[V]
	ws *store.WatchStore

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
	c.ws = store.NewWatchStore(a.opts.Scope, store.KeyFactoryFunc(c.decode), c,
		store.WithLogger(a.log), store.WithMetrics(a.opts.Metrics),
		store.WithOnSync(func(context.Context) {
			close(c.synced)
			if fn := a.opts.Events.Synced; fn != nil {
				fn()
			}
		}))
	return c
}

// decode is the watch store's KeyFactory: a master key whose name is no
// id or whose value is empty is malformed (an error of no kind); Decode's
// error says the kind of the others it refuses.
func (c *cache[V]) decode(name string, value []byte) (store.Key, error) {
	n, err := strconv.ParseUint(name, 10, 64)
	switch {
	case err != nil || strconv.FormatUint(n, 10) != name:
		return nil, fmt.Errorf("master key name %q is not a decimal id", name)
	case n == 0:
		return nil, fmt.Errorf("master key name %q: id 0 is never allocated", name)
	case len(value) == 0:
		return nil, fmt.Errorf("id %d: empty value", n)
	}
	e := &cacheEntry[V]{name: name, id: ID(n), key: string(value)}
	if e.value, err = c.a.opts.Decode(e.id, e.key); err != nil {
		return nil, err
	}
	return e, nil
}

// OnUpdate indexes a new or changed entry and tells the events.
func (c *cache[V]) OnUpdate(k store.Key) {
	e := k.(*cacheEntry[V])
	c.mu.Lock()
	prev := c.unindexLocked(e.name)
	c.byName[e.name] = e
	c.byID[e.id] = e
	if _, ok := c.byKey[e.key]; !ok {
		c.byKey[e.key] = e.id
	}
	c.keyCount[e.key]++
	c.mu.Unlock()
	ev := c.a.opts.Events
	if prev != nil && ev.Delete != nil {
		ev.Delete(prev.id, prev.value)
	}
	if ev.Upsert != nil {
		ev.Upsert(e.id, e.value)
	}
}

// OnDelete forgets an entry and tells the events.
func (c *cache[V]) OnDelete(k store.Key) {
	e := k.(*cacheEntry[V])
	c.mu.Lock()
	prev := c.unindexLocked(e.name)
	c.mu.Unlock()
	if prev != nil && c.a.opts.Events.Delete != nil {
		c.a.opts.Events.Delete(prev.id, prev.value)
	}
}

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
	a.cache.ws.Watch(ctx, a.opts.Backend, a.paths.IDPrefix())
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
