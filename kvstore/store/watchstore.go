package store

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/kvstore"
)

// WatchStore mirrors the keys under a prefix into an Observer. It is
// restartable: Watch may be called again (after a reconnect, or on the
// backend of a new connection), and keys that vanished while it was not
// watching are deleted as soon as the new list is complete.
//
// Entries the KeyFactory refuses are skipped, never fatal: counted per
// kind (ErrMalformed, ErrRefused) in metrics, logged (rate limited) and
// listed for the owner's status line (SkipStats, Skipped) for as long as
// they are in the kvstore. A key that turns bad keeps its last good value.
type WatchStore struct {
	scope    string
	factory  KeyFactory
	observer Observer
	log      *slog.Logger
	metrics  *Metrics
	writer   *SyncStore // told about every event, to defend its keys
	seed     maphash.Seed
	// namesOnly keeps a NameKey instead of the decoded key (WithNamesOnly).
	namesOnly bool

	entriesGauge prometheus.Gauge

	mu      sync.Mutex
	entries entryTable
	skipped map[string]*skipEntry
	skipSeq uint64
	skipLog skipLog
	onSync  []func(ctx context.Context)
	synced  atomic.Bool
	running atomic.Bool
}

// NameKey is a key that is only its name: what a store created WithNamesOnly
// keeps of a key and hands to the observer when it is removed.
type NameKey string

// GetKeyName returns the name.
func (n NameKey) GetKeyName() string { return string(n) }

// WatchStoreOption configures a WatchStore.
type WatchStoreOption func(*WatchStore)

// WithOnSync adds a callback run (once) when the first list is done.
func WithOnSync(fn func(ctx context.Context)) WatchStoreOption {
	return func(w *WatchStore) { w.onSync = append(w.onSync, fn) }
}

// WithLogger sets the store's logger.
func WithLogger(log *slog.Logger) WatchStoreOption {
	return func(w *WatchStore) { w.log = log }
}

// WithMetrics sets the store's metrics.
func WithMetrics(m *Metrics) WatchStoreOption {
	return func(w *WatchStore) { w.metrics = m }
}

// WithNamesOnly makes the store keep only each key's name, not its
// decoded value: the observer gets a removed key as a NameKey, and Get
// returns a NameKey. It is for observers that find what they hold by the
// key's name, so that a decoded value is not held twice.
func WithNamesOnly() WatchStoreOption {
	return func(w *WatchStore) { w.namesOnly = true }
}

// WithWriter hands every event of the watched prefix to the SyncStore
// that writes this agent's keys under it, so it defends them without a
// watch of its own. Keys of the SyncStore outside the watched prefix are
// then only compared on its periodic sync.
func WithWriter(s *SyncStore) WatchStoreOption {
	return func(w *WatchStore) {
		w.writer = s
		s.fedBy()
	}
}

// NewWatchStore creates a store; scope names it in logs and metrics
// (e.g. "nodes" or "c2/nodes" for a remote cluster).
func NewWatchStore(scope string, factory KeyFactory, observer Observer, opts ...WatchStoreOption) *WatchStore {
	w := &WatchStore{
		scope: scope, factory: factory, observer: observer,
		log: slog.New(slog.DiscardHandler), seed: maphash.MakeSeed(),
		skipped: map[string]*skipEntry{}, skipLog: newSkipLog(),
	}
	for _, o := range opts {
		o(w)
	}
	w.entries = newEntryTable(w.namesOnly)
	w.metrics = metricsOrDefault(w.metrics)
	w.entriesGauge = w.metrics.Entries.WithLabelValues(scope)
	w.metrics.Synced.WithLabelValues(scope, "read").Set(0)
	return w
}

// maxBatch is the most events a store takes from the backend at once:
// while it lists or catches up, events queue up, and a batch costs one
// lock and one call of a BatchObserver instead of one per key; small
// enough that readers of the store (status, lookups) wait at most a
// batch's decoding for its lock.
const maxBatch = 256

// Watch lists and watches prefix on backend until ctx ends. It must not
// run twice at the same time. Known keys are marked stale first, so the
// ones not listed again are deleted when the list is done.
func (w *WatchStore) Watch(ctx context.Context, backend kvstore.Backend, prefix string) {
	if !w.running.CompareAndSwap(false, true) {
		panic("store.WatchStore: Watch is already running for " + w.scope)
	}
	defer w.running.Store(false)
	prefix = dirPrefix(prefix)
	w.markStale()
	w.log.Info("Starting to watch", "scope", w.scope, "prefix", prefix)
	events := backend.ListAndWatch(ctx, prefix)
	batch := make([]kvstore.Event, 0, maxBatch)
	var changes []Change
	for ev := range events {
		batch = takeQueued(events, append(batch[:0], ev))
		changes = w.apply(ctx, prefix, batch, changes[:0])
		clear(batch) // drop the values until the next batch
	}
	w.log.Info("Stopped watching", "scope", w.scope, "prefix", prefix)
}

// takeQueued appends the events already waiting in events to batch, up
// to maxBatch; it never waits.
func takeQueued(events <-chan kvstore.Event, batch []kvstore.Event) []kvstore.Event {
	for len(batch) < maxBatch {
		select {
		case ev, ok := <-events:
			if !ok {
				return batch
			}
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

// apply processes a batch of events in order and tells the observer
// what changed, in order too; the end of the first list first delivers
// what came before it, then deletes the stale keys and marks the store
// synced. changes is a buffer for the observer's changes; apply returns
// it for the next batch.
func (w *WatchStore) apply(ctx context.Context, prefix string, batch []kvstore.Event, changes []Change) []Change {
	if w.writer != nil {
		for _, ev := range batch {
			w.writer.observe(ev)
		}
	}
	w.mu.Lock()
	for _, ev := range batch {
		switch ev.Type {
		case kvstore.EventListDone:
			w.mu.Unlock()
			w.notify(changes)
			changes = changes[:0]
			w.deleteStale()
			w.markSynced(ctx)
			w.mu.Lock()
		case kvstore.EventDelete:
			changes = w.removeLocked(nameOf(ev, prefix), changes)
		default:
			changes = w.upsertLocked(ev.Key, nameOf(ev, prefix), ev.Value, changes)
		}
	}
	w.entriesGauge.Set(float64(w.entries.len()))
	w.mu.Unlock()
	w.notify(changes)
	clear(changes) // the observer keeps no reference; let the keys go
	return changes
}

// nameOf returns the event's key below prefix: the backend's Name when
// it gives one (a string the backend keeps too, so the store's entries
// share it), else the rest of Key.
func nameOf(ev kvstore.Event, prefix string) string {
	if ev.Name != "" {
		return ev.Name
	}
	return strings.TrimPrefix(ev.Key, prefix)
}

// notify hands changes to the observer: at once to a BatchObserver, one
// by one to the others.
func (w *WatchStore) notify(changes []Change) {
	if len(changes) == 0 {
		return
	}
	if bo, ok := w.observer.(BatchObserver); ok {
		bo.OnChanges(changes)
		return
	}
	for _, c := range changes {
		if c.Deleted {
			w.observer.OnDelete(c.Key)
		} else {
			w.observer.OnUpdate(c.Key)
		}
	}
}

func (w *WatchStore) markStale() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, e := range w.entries.all() {
		w.entries.set(name, e.withStale(true))
	}
	for _, s := range w.skipped {
		s.stale = true
	}
}

// upsertLocked decodes a new or changed value and appends the change;
// a value equal to the held one is only marked fresh, a value the
// factory refuses is skipped (keeping the last good value).
func (w *WatchStore) upsertLocked(fullKey, name string, value []byte, changes []Change) []Change {
	sum := valueSum(w.seed, value)
	e, ok := w.entries.get(name)
	if ok && e.sameValue(sum) {
		if e.stale() {
			w.entries.set(name, e.withStale(false))
		}
		delete(w.skipped, name)
		return changes
	}
	key, err := w.factory.Unmarshal(name, value)
	if err == nil && key == nil {
		err = fmt.Errorf("%w: decoded to nothing", ErrMalformed)
	}
	if err != nil {
		w.skipLocked(fullKey, name, value, err)
		if ok && e.stale() {
			// keep the last good value rather than lose the entry
			w.entries.set(name, e.withStale(false))
		}
		return changes
	}
	delete(w.skipped, name)
	kept := key
	if w.namesOnly {
		kept = nil // the table's key is the name: see keyOf
	}
	w.entries.set(name, watchEntry{key: kept, sum: sum})
	return append(changes, Change{Key: key})
}

// removeLocked forgets the entry named name and appends its deletion.
func (w *WatchStore) removeLocked(name string, changes []Change) []Change {
	delete(w.skipped, name)
	e, ok := w.entries.get(name)
	if !ok {
		return changes
	}
	w.entries.remove(name)
	return append(changes, Change{Key: e.keyOf(name), Deleted: true})
}

// deleteStale deletes the entries the last list did not bring again.
func (w *WatchStore) deleteStale() {
	var changes []Change
	w.mu.Lock()
	for name, e := range w.entries.all() {
		if e.stale() {
			w.log.Info("Deleting stale key", "scope", w.scope, "key", name)
			changes = w.removeLocked(name, changes)
		}
	}
	for name, s := range w.skipped {
		if s.stale {
			delete(w.skipped, name)
		}
	}
	w.entriesGauge.Set(float64(w.entries.len()))
	w.mu.Unlock()
	w.notify(changes)
}

func (w *WatchStore) markSynced(ctx context.Context) {
	if w.synced.Swap(true) {
		return
	}
	w.metrics.Synced.WithLabelValues(w.scope, "read").Set(1)
	w.log.Info("Initial list done", "scope", w.scope, "entries", w.NumEntries())
	w.mu.Lock()
	callbacks := w.onSync
	w.mu.Unlock()
	for _, fn := range callbacks {
		fn(ctx)
	}
}

// Drain deletes every entry, telling the observer. It is for a remote
// cluster that was removed, never for an agent that shuts down.
func (w *WatchStore) Drain() {
	w.mu.Lock()
	changes := make([]Change, 0, w.entries.len())
	for name, e := range w.entries.all() {
		changes = append(changes, Change{Key: e.keyOf(name), Deleted: true})
	}
	w.entries.clear()
	clear(w.skipped)
	w.entriesGauge.Set(0)
	w.mu.Unlock()
	w.notify(changes)
	w.synced.Store(false)
	w.metrics.Synced.WithLabelValues(w.scope, "read").Set(0)
}

// NumEntries returns the number of keys held.
func (w *WatchStore) NumEntries() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.entries.len()
}

// Synced reports whether the first list has completed.
func (w *WatchStore) Synced() bool { return w.synced.Load() }

// Get returns the entry named name.
func (w *WatchStore) Get(name string) (Key, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.entries.get(name)
	if !ok {
		return nil, false
	}
	return e.keyOf(name), true
}
