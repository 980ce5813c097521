package allocator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/apiary-net/apiary/cells/job"
)

// retryExpired is the backoff before writing lost references again after
// a failure: references are lost with the session lease, so after an
// etcd outage every agent writes its references at once.
var retryExpired = job.Backoff{Min: time.Second, Max: 30 * time.Second, Factor: 2}

// Release drops a local reference to key; with the last one it deletes
// this node's reference key (a failed deletion is logged and retried by
// SyncLocalKeys) and last is true. The master key stays until the GC
// finds it unreferenced.
func (a *Allocator[V]) Release(ctx context.Context, key string) (last bool, err error) {
	unlock := a.keyMu.Lock(key)
	defer unlock()
	a.mu.Lock()
	l, ok := a.local[key]
	if !ok {
		a.mu.Unlock()
		return false, fmt.Errorf("release %q: %w", key, ErrNotAllocated)
	}
	l.refs--
	if l.refs > 0 {
		a.mu.Unlock()
		return false, nil
	}
	delete(a.local, key)
	delete(a.localIDs, l.id)
	delete(a.expired, key)
	a.mu.Unlock()
	valueKey := a.paths.ValueKey(key, a.opts.Suffix)
	if err := a.opts.Backend.Delete(ctx, valueKey); err != nil {
		a.log.Warn("Deleting reference failed, retrying later", "scope", a.opts.Scope, "key", valueKey, "error", err)
		a.mu.Lock()
		a.pendingRelease[key] = struct{}{}
		a.mu.Unlock()
	}
	return true, nil
}

// onLeaseExpired is told about reference keys whose session lease
// expired; the ones of keys still in local use are written again.
func (a *Allocator[V]) onLeaseExpired(fullKey string) {
	key, suffix, ok := a.paths.splitValueKey(fullKey)
	if !ok || suffix != a.opts.Suffix {
		return
	}
	a.mu.Lock()
	_, held := a.local[key]
	if held {
		a.expired[key] = struct{}{}
	}
	a.mu.Unlock()
	if held {
		select {
		case a.expiredSignal <- struct{}{}:
		default:
		}
	}
}

// recreateExpired writes lost references again until ctx ends.
func (a *Allocator[V]) recreateExpired(ctx context.Context) {
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.expiredSignal:
		}
		a.mu.Lock()
		keys := slices.Collect(maps.Keys(a.expired))
		clear(a.expired)
		a.mu.Unlock()
		failed := false
		for _, key := range keys {
			if err := a.restore(ctx, key); err != nil {
				a.log.Warn("Writing lost reference failed, retrying", "scope", a.opts.Scope, "key", key, "error", err)
				a.mu.Lock()
				if _, held := a.local[key]; held {
					a.expired[key] = struct{}{}
				}
				a.mu.Unlock()
				failed = true
				continue
			}
			a.log.Info("Wrote reference lost with the session lease again", "scope", a.opts.Scope, "key", key)
		}
		if !failed {
			failures = 0
			continue
		}
		failures++
		if !job.Sleep(ctx, retryExpired.Duration(failures)) {
			return
		}
		select {
		case a.expiredSignal <- struct{}{}:
		default:
		}
	}
}

// heldID returns the id of a key in local use.
func (a *Allocator[V]) heldID(key string) (ID, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.local[key]
	if !ok {
		return 0, false
	}
	return l.id, true
}

// restore makes sure that the master key and this node's reference of a
// key in local use exist.
func (a *Allocator[V]) restore(ctx context.Context, key string) error {
	unlock := a.keyMu.Lock(key)
	defer unlock()
	id, held := a.heldID(key)
	if !held {
		return nil // released meanwhile
	}
	return a.restoreLocked(ctx, key, id)
}

// restoreLocked runs under the key's local lock and takes its kvstore
// lock, so that the GC cannot collect the master in between.
func (a *Allocator[V]) restoreLocked(ctx context.Context, key string, id ID) error {
	lock, err := a.opts.Backend.LockPath(ctx, a.paths.LockPath(key))
	if err != nil {
		return err
	}
	defer a.unlock(ctx, lock, key)
	if err := a.ensureMaster(ctx, id, key); err != nil {
		if errors.Is(err, ErrConflict) {
			a.log.Error("The id of a key in local use was given to another key; its users must allocate again",
				"scope", a.opts.Scope, "key", key, "id", id, "error", err)
		}
		return err
	}
	valueKey := a.paths.ValueKey(key, a.opts.Suffix)
	if _, err := a.opts.Backend.UpdateIfDifferent(ctx, valueKey, []byte(id.String()), true); err != nil {
		return fmt.Errorf("write reference %s: %w", valueKey, err)
	}
	return nil
}

// SyncLocalKeys repairs the kvstore state of this node: it deletes
// references whose deletion failed, and for every key in local use
// writes its reference if it is missing or different, and re-creates its
// master if the cache lacks it. Run it periodically.
func (a *Allocator[V]) SyncLocalKeys(ctx context.Context) error {
	a.mu.Lock()
	pending := slices.Collect(maps.Keys(a.pendingRelease))
	local := slices.Collect(maps.Keys(a.local))
	a.mu.Unlock()
	var errs []error
	for _, key := range pending {
		if err := a.retryRelease(ctx, key); err != nil {
			errs = append(errs, err)
		}
	}
	for _, key := range local {
		if err := a.syncKey(ctx, key); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sync local keys: %w", err)
	}
	return nil
}

// retryRelease deletes the reference of a released key again.
func (a *Allocator[V]) retryRelease(ctx context.Context, key string) error {
	unlock := a.keyMu.Lock(key)
	defer unlock()
	if _, held := a.heldID(key); held {
		return nil // in use again: its reference is wanted
	}
	valueKey := a.paths.ValueKey(key, a.opts.Suffix)
	if err := a.opts.Backend.Delete(ctx, valueKey); err != nil {
		return fmt.Errorf("delete reference %s: %w", valueKey, err)
	}
	a.mu.Lock()
	delete(a.pendingRelease, key)
	a.mu.Unlock()
	return nil
}

// syncKey writes the reference of a key in local use if it differs, and
// restores the master when the reference was missing or the cache lacks
// the master.
func (a *Allocator[V]) syncKey(ctx context.Context, key string) error {
	unlock := a.keyMu.Lock(key)
	defer unlock()
	id, held := a.heldID(key)
	if !held {
		return nil
	}
	valueKey := a.paths.ValueKey(key, a.opts.Suffix)
	wrote, err := a.opts.Backend.UpdateIfDifferent(ctx, valueKey, []byte(id.String()), true)
	if err != nil {
		return fmt.Errorf("write reference %s: %w", valueKey, err)
	}
	if wrote {
		a.log.Warn("Re-created missing reference", "scope", a.opts.Scope, "key", valueKey)
	}
	if k, ok := a.cache.keyOf(id); wrote || !ok || k != key {
		return a.restoreLocked(ctx, key, id)
	}
	return nil
}
