package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apiary-net/apiary/kvstore"
)

// SharedStoreConfig configures JoinSharedStore.
type SharedStoreConfig struct {
	Backend    kvstore.Backend
	Prefix     string
	KeyFactory KeyFactory
	// Observer is told about every key under the prefix, ours included.
	Observer Observer
	// SynchronizationInterval is how often local keys are written again
	// (--kvstore-periodic-sync; default 5m).
	SynchronizationInterval time.Duration
	// InitialListTimeout bounds the wait for the first list (default 30s).
	InitialListTimeout time.Duration
	Logger             *slog.Logger
	Metrics            *Metrics
}

// SharedStore holds keys under one prefix that every agent reads and each
// agent writes its own of: local keys are bound to this agent's session
// lease, written again every SynchronizationInterval, and re-created at
// once when someone deletes them or their lease expires.
type SharedStore struct {
	cfg   SharedStoreConfig
	watch *WatchStore

	mu    sync.Mutex
	local map[string][]byte

	resync chan string
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// ErrInitialListTimeout is returned when the first list does not finish in time.
var ErrInitialListTimeout = errors.New("initial list did not complete in time")

// JoinSharedStore starts watching the prefix and waits for the first list.
func JoinSharedStore(ctx context.Context, cfg SharedStoreConfig) (*SharedStore, error) {
	if cfg.SynchronizationInterval <= 0 {
		cfg.SynchronizationInterval = 5 * time.Minute
	}
	if cfg.InitialListTimeout <= 0 {
		cfg.InitialListTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Prefix = dirPrefix(cfg.Prefix)
	s := &SharedStore{cfg: cfg, local: map[string][]byte{}, resync: make(chan string, 64)}
	synced := make(chan struct{})
	s.watch = NewWatchStore(cfg.Prefix, cfg.KeyFactory, sharedObserver{s},
		WithLogger(cfg.Logger), WithMetrics(cfg.Metrics),
		WithOnSync(func(context.Context) { close(synced) }))
	cfg.Backend.OnLeaseExpired(cfg.Prefix, func(key string) { s.requestResync(key[len(cfg.Prefix):]) })

	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Go(func() { s.watch.Watch(runCtx, cfg.Backend, cfg.Prefix) })
	s.wg.Go(func() { s.syncLoop(runCtx) })

	timer := time.NewTimer(cfg.InitialListTimeout)
	defer timer.Stop()
	select {
	case <-synced:
		return s, nil
	case <-timer.C:
		s.Close()
		return nil, fmt.Errorf("join shared store %s: %w (%s)", cfg.Prefix, ErrInitialListTimeout, cfg.InitialListTimeout)
	case <-ctx.Done():
		s.Close()
		return nil, fmt.Errorf("join shared store %s: %w", cfg.Prefix, ctx.Err())
	}
}

// sharedObserver forwards watch events and notices local keys deleted by
// someone else.
type sharedObserver struct{ s *SharedStore }

func (o sharedObserver) OnUpdate(k Key) { o.s.cfg.Observer.OnUpdate(k) }

func (o sharedObserver) OnDelete(k Key) {
	o.s.cfg.Observer.OnDelete(k)
	o.s.requestResync(k.GetKeyName())
}

func (s *SharedStore) requestResync(name string) {
	s.mu.Lock()
	_, ours := s.local[name]
	s.mu.Unlock()
	if !ours {
		return
	}
	select {
	case s.resync <- name:
	default: // the periodic sync will catch it
		s.cfg.Logger.Warn("Resync queue full, key will be written at the next periodic sync", "key", s.cfg.Prefix+name)
	}
}

func (s *SharedStore) syncLoop(ctx context.Context) {
	ticker := time.NewTicker(s.cfg.SynchronizationInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case name := <-s.resync:
			s.writeLocal(ctx, name)
		case <-ticker.C:
			s.mu.Lock()
			names := make([]string, 0, len(s.local))
			for n := range s.local {
				names = append(names, n)
			}
			s.mu.Unlock()
			for _, n := range names {
				s.writeLocal(ctx, n)
			}
		}
	}
}

// writeLocal writes a local key if it still is one and differs in etcd.
func (s *SharedStore) writeLocal(ctx context.Context, name string) {
	s.mu.Lock()
	value, ok := s.local[name]
	s.mu.Unlock()
	if !ok {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	wrote, err := s.cfg.Backend.UpdateIfDifferent(wctx, s.cfg.Prefix+name, value, true)
	if err != nil {
		s.cfg.Logger.Warn("Unable to write local key", "key", s.cfg.Prefix+name, "error", err)
		return
	}
	if wrote {
		s.cfg.Logger.Info("Wrote local key again", "key", s.cfg.Prefix+name)
	}
}

// UpdateLocalKeySync writes a local key now.
func (s *SharedStore) UpdateLocalKeySync(ctx context.Context, k LocalKey) error {
	value, err := k.Marshal()
	if err != nil {
		return fmt.Errorf("marshal %s%s: %w", s.cfg.Prefix, k.GetKeyName(), err)
	}
	s.mu.Lock()
	s.local[k.GetKeyName()] = value
	s.mu.Unlock()
	return s.cfg.Backend.Update(ctx, s.cfg.Prefix+k.GetKeyName(), value, true)
}

// DeleteLocalKey deletes a local key now.
func (s *SharedStore) DeleteLocalKey(ctx context.Context, k Key) error {
	s.mu.Lock()
	delete(s.local, k.GetKeyName())
	s.mu.Unlock()
	return s.cfg.Backend.Delete(ctx, s.cfg.Prefix+k.GetKeyName())
}

// SharedKeys returns every key under the prefix (ours included).
func (s *SharedStore) SharedKeys() map[string]Key {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	out := make(map[string]Key, s.watch.entries.len())
	for n, e := range s.watch.entries.all() {
		out[n] = e.keyOf(n)
	}
	return out
}

// Close stops watching and syncing. Local keys stay in the kvstore until
// their lease expires, so a restarting agent does not make them flap.
func (s *SharedStore) Close() {
	s.cancel()
	s.wg.Wait()
}
