package allocator

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// gcLockWait is how long RunGC waits for the GC lock before it leaves
// the round to the agent holding it.
const gcLockWait = 2 * time.Second

// GCStats is the outcome of one garbage collection round.
type GCStats struct {
	// Skipped is true when another agent held the GC lock.
	Skipped bool
	// Alive counts the master keys of the range that remain.
	Alive int
	// Marked counts the unreferenced masters seen for the first time;
	// the next round deletes them if they are still unreferenced.
	Marked int
	// Deleted counts the master keys deleted.
	Deleted int
}

// RunGC deletes the master keys of the range that no node references and
// that were unreferenced, with the same modification revision, at the
// previous round of this allocator. Masters outside the range (other
// allocators') are left alone. Only one agent collects at a time: it
// holds <base>/locks/gc; if another agent holds it, the round is skipped.
// Each master is checked and deleted under the lock of its key, which
// Allocate holds too, so a master being referenced is never deleted.
func (a *Allocator[V]) RunGC(ctx context.Context) (GCStats, error) {
	lctx, cancel := context.WithTimeout(ctx, gcLockWait)
	lock, err := a.opts.Backend.LockPath(lctx, a.paths.GCLockPath())
	timedOut := lctx.Err() != nil
	cancel()
	if err != nil {
		if timedOut && ctx.Err() == nil {
			a.log.Debug("Another agent is collecting, skipping this round", "scope", a.opts.Scope)
			return GCStats{Skipped: true}, nil
		}
		return GCStats{}, fmt.Errorf("lock garbage collector: %w", err)
	}
	defer a.unlock(ctx, lock, "gc")

	masters, err := a.opts.Backend.ListPrefix(ctx, a.paths.IDPrefix())
	if err != nil {
		return GCStats{}, fmt.Errorf("list master keys: %w", err)
	}
	values, err := a.opts.Backend.ListPrefix(ctx, a.paths.ValuesPrefix())
	if err != nil {
		return GCStats{}, fmt.Errorf("list references: %w", err)
	}
	referenced := make(map[string]bool, len(values))
	for k := range values {
		if key, _, ok := a.paths.splitValueKey(k); ok {
			referenced[key] = true
		}
	}
	var stats GCStats
	stale := map[string]int64{}
	for masterKey, v := range masters {
		if !a.inRange(masterKey) {
			continue
		}
		stats.Alive++
		key := string(v.Data)
		if referenced[key] || a.LocalRefs(key) > 0 {
			continue
		}
		deleted, err := a.collect(ctx, masterKey, key, v.ModRevision, stale)
		if err != nil {
			return stats, fmt.Errorf("collect %s: %w", masterKey, err)
		}
		if deleted {
			stats.Deleted++
			stats.Alive--
		}
	}
	stats.Marked = len(stale)
	a.mu.Lock()
	a.gcStale = stale
	a.mu.Unlock()
	if stats.Deleted > 0 || stats.Marked > 0 {
		a.log.Info("Garbage collection done", "scope", a.opts.Scope,
			"alive", stats.Alive, "deleted", stats.Deleted, "marked", stats.Marked)
	}
	return stats, nil
}

// inRange reports whether a master key names an id of the range.
func (a *Allocator[V]) inRange(masterKey string) bool {
	name := strings.TrimPrefix(masterKey, a.paths.IDPrefix())
	n, err := strconv.ParseUint(name, 10, 64)
	return err == nil && strconv.FormatUint(n, 10) == name && ID(n) >= a.opts.Min && ID(n) <= a.opts.Max
}

// collect checks an unreferenced master again under its key's lock and
// deletes it if it was already unreferenced at the previous round;
// otherwise it marks it in stale.
func (a *Allocator[V]) collect(ctx context.Context, masterKey, key string, modRev int64, stale map[string]int64) (bool, error) {
	lock, err := a.opts.Backend.LockPath(ctx, a.paths.LockPath(key))
	if err != nil {
		return false, err
	}
	defer a.unlock(ctx, lock, key)
	refs, err := a.opts.Backend.ListPrefix(ctx, a.paths.ValuePrefix(key))
	if err != nil {
		return false, fmt.Errorf("list references: %w", err)
	}
	for k := range refs {
		if !strings.Contains(strings.TrimPrefix(k, a.paths.ValuePrefix(key)), "/") {
			return false, nil // referenced since the list
		}
	}
	current, err := a.opts.Backend.Get(ctx, masterKey)
	if err != nil {
		return false, fmt.Errorf("read master key: %w", err)
	}
	if current == nil || string(current) != key {
		return false, nil // deleted or replaced since the list
	}
	a.mu.Lock()
	prev, marked := a.gcStale[masterKey]
	a.mu.Unlock()
	if !marked || prev != modRev {
		stale[masterKey] = modRev
		return false, nil
	}
	if err := a.opts.Backend.Delete(ctx, masterKey); err != nil {
		return false, fmt.Errorf("delete master key: %w", err)
	}
	a.log.Info("Deleted unreferenced master key", "scope", a.opts.Scope, "key", masterKey, "value", key)
	return true, nil
}
