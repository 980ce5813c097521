package store

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

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

	mu      sync.Mutex
	entries map[string]*watchEntry
	skipped map[string]*skipEntry
	skipSeq uint64
	skipLog skipLog
	onSync  []func(ctx context.Context)
	synced  atomic.Bool
	running atomic.Bool
}

type watchEntry struct {
	key   Key
	value []byte
	stale bool
}

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
		log: slog.New(slog.DiscardHandler), entries: map[string]*watchEntry{},
		skipped: map[string]*skipEntry{}, skipLog: newSkipLog(),
	}
	for _, o := range opts {
		o(w)
	}
	w.metrics = metricsOrDefault(w.metrics)
	w.metrics.Synced.WithLabelValues(scope, "read").Set(0)
	return w
}

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
	for ev := range backend.ListAndWatch(ctx, prefix) {
		if w.writer != nil {
			w.writer.observe(ev)
		}
		switch ev.Type {
		case kvstore.EventListDone:
			w.deleteStale()
			w.markSynced(ctx)
		case kvstore.EventDelete:
			w.remove(strings.TrimPrefix(ev.Key, prefix))
		default:
			w.upsert(ev.Key, strings.TrimPrefix(ev.Key, prefix), ev.Value)
		}
	}
	w.log.Info("Stopped watching", "scope", w.scope, "prefix", prefix)
}

func (w *WatchStore) markStale() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.entries {
		e.stale = true
	}
	for _, s := range w.skipped {
		s.stale = true
	}
}

func (w *WatchStore) upsert(fullKey, name string, value []byte) {
	w.mu.Lock()
	e, ok := w.entries[name]
	if ok && bytes.Equal(e.value, value) {
		e.stale = false
		delete(w.skipped, name)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	key, err := w.factory.Unmarshal(name, value)
	if err == nil && key == nil {
		err = fmt.Errorf("%w: decoded to nothing", ErrMalformed)
	}
	w.mu.Lock()
	if err != nil {
		w.skipLocked(fullKey, name, value, err)
		if ok {
			e.stale = false // keep the last good value rather than lose the entry
		}
		w.mu.Unlock()
		return
	}
	delete(w.skipped, name)
	w.entries[name] = &watchEntry{key: key, value: value}
	w.metrics.Entries.WithLabelValues(w.scope).Set(float64(len(w.entries)))
	w.mu.Unlock()
	w.observer.OnUpdate(key)
}

func (w *WatchStore) remove(name string) {
	w.mu.Lock()
	delete(w.skipped, name)
	e, ok := w.entries[name]
	delete(w.entries, name)
	w.metrics.Entries.WithLabelValues(w.scope).Set(float64(len(w.entries)))
	w.mu.Unlock()
	if ok {
		w.observer.OnDelete(e.key)
	}
}

func (w *WatchStore) deleteStale() {
	w.mu.Lock()
	var stale []string
	for name, e := range w.entries {
		if e.stale {
			stale = append(stale, name)
		}
	}
	for name, s := range w.skipped {
		if s.stale {
			delete(w.skipped, name)
		}
	}
	w.mu.Unlock()
	for _, name := range stale {
		w.log.Info("Deleting stale key", "scope", w.scope, "key", name)
		w.remove(name)
	}
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
	names := make([]string, 0, len(w.entries))
	for name := range w.entries {
		names = append(names, name)
	}
	clear(w.skipped)
	w.mu.Unlock()
	for _, name := range names {
		w.remove(name)
	}
	w.synced.Store(false)
	w.metrics.Synced.WithLabelValues(w.scope, "read").Set(0)
}

// NumEntries returns the number of keys held.
func (w *WatchStore) NumEntries() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.entries)
}

// Synced reports whether the first list has completed.
func (w *WatchStore) Synced() bool { return w.synced.Load() }

// Get returns the entry named name.
func (w *WatchStore) Get(name string) (Key, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.entries[name]
	if !ok {
		return nil, false
	}
	return e.key, true
}
