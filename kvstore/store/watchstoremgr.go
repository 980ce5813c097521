package store

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// WatchStoreManager starts the watchers of several prefixes of one
// cluster. In sync mode a prefix's watcher starts only once the writer's
// sync canary for it exists, so a reader never sees a half-written prefix
// as complete; immediate mode starts all at once, for remotes that
// publish no canaries.
type WatchStoreManager interface {
	// Register adds the function that watches prefix; it runs until the
	// context given to Run ends.
	Register(prefix string, fn func(ctx context.Context))
	// Run starts the registered functions as the mode says and waits for
	// all of them after ctx ends.
	Run(ctx context.Context)
}

// NewWatchStoreManagerSync returns a manager in sync mode for cluster.
func NewWatchStoreManagerSync(backend kvstore.Backend, cluster string, log *slog.Logger) WatchStoreManager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &syncManager{backend: backend, canaries: layout.SyncedClusterPrefix(cluster) + "/", log: log, fns: map[string]func(context.Context){}}
}

// NewWatchStoreManagerImmediate returns a manager in immediate mode.
func NewWatchStoreManagerImmediate() WatchStoreManager {
	return &immediateManager{fns: map[string]func(context.Context){}}
}

type syncManager struct {
	backend  kvstore.Backend
	canaries string
	log      *slog.Logger
	mu       sync.Mutex
	fns      map[string]func(context.Context)
}

func (m *syncManager) Register(prefix string, fn func(ctx context.Context)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fns[strings.TrimSuffix(prefix, "/")] = fn
}

func (m *syncManager) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for ev := range m.backend.ListAndWatch(ctx, m.canaries) {
		if ev.Type != kvstore.EventCreate && ev.Type != kvstore.EventModify {
			continue
		}
		prefix := strings.TrimPrefix(ev.Key, m.canaries)
		m.mu.Lock()
		fn, ok := m.fns[prefix]
		delete(m.fns, prefix) // start each watcher once
		m.mu.Unlock()
		if ok {
			m.log.Info("Sync canary found, starting watcher", "prefix", prefix, "canary", ev.Key)
			wg.Go(func() { fn(ctx) })
		}
	}
}

type immediateManager struct {
	mu  sync.Mutex
	fns map[string]func(context.Context)
}

func (m *immediateManager) Register(prefix string, fn func(ctx context.Context)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fns[prefix] = fn
}

func (m *immediateManager) Run(ctx context.Context) {
	var wg sync.WaitGroup
	m.mu.Lock()
	for _, fn := range m.fns {
		wg.Go(func() { fn(ctx) })
	}
	m.mu.Unlock()
	wg.Wait()
}
