package k8s

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
)

// CacheSync is the cache-sync gate: the agent's work that must not see a
// half-filled Kubernetes cache (endpoint regeneration, identity GC, CT GC,
// the ipcache map reconcile) waits for it.
type CacheSync interface {
	// Register declares, while the hive is built, a cache the gate waits
	// for; the returned function marks it synced (it may be called more
	// than once).
	Register(name string) (synced func())
	// WaitForCacheSync returns when every registered cache has synced, or
	// --k8s-sync-timeout after the hive started (logged once, with the
	// caches still missing), or with ctx's error when ctx ends first.
	// Without Kubernetes it returns at once.
	WaitForCacheSync(ctx context.Context) error
	// Pending returns the names of the caches not synced yet, sorted, and
	// whether the gate is open.
	Pending() ([]string, bool)
}

// gate implements CacheSync.
type gate struct {
	log     *slog.Logger
	timeout time.Duration

	mu      sync.Mutex
	pending map[string]bool
	open    chan struct{}
	opened  bool
	timer   *time.Timer
}

var _ CacheSync = (*gate)(nil)

func newGate(cfg Config, cs Clientset, lc cell.Lifecycle, log *slog.Logger) CacheSync {
	g := &gate{log: log, timeout: cfg.K8sSyncTimeout, pending: map[string]bool{}, open: make(chan struct{})}
	if !cs.IsEnabled() {
		g.openLocked()
		return g
	}
	lc.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			g.mu.Lock()
			defer g.mu.Unlock()
			if len(g.pending) == 0 {
				g.openLocked()
				return nil
			}
			g.timer = time.AfterFunc(g.timeout, g.expire)
			return nil
		},
		OnStop: func(cell.HookContext) error {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.timer != nil {
				g.timer.Stop()
			}
			return nil
		},
	})
	return g
}

func (g *gate) Register(name string) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		return func() {} // disabled, or registered too late to hold anything
	}
	g.pending[name] = true
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.pending[name] {
			return
		}
		delete(g.pending, name)
		g.log.Info("Kubernetes cache synced", "cache", name, "pending", len(g.pending))
		if len(g.pending) == 0 && g.timer != nil { // started: the gate opens
			g.timer.Stop()
			g.openLocked()
		}
	}
}

// expire opens the gate when --k8s-sync-timeout passed.
func (g *gate) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		return
	}
	g.log.Warn("Kubernetes caches not synced within --k8s-sync-timeout; going on without them",
		"timeout", g.timeout, "pending", g.pendingLocked())
	g.openLocked()
}

func (g *gate) openLocked() {
	if !g.opened {
		g.opened = true
		close(g.open)
	}
}

func (g *gate) pendingLocked() []string {
	names := make([]string, 0, len(g.pending))
	for n := range g.pending {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (g *gate) WaitForCacheSync(ctx context.Context) error {
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) Pending() ([]string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pendingLocked(), g.opened
}
