package allocator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/apiary-net/apiary/kvstore"
)

const (
	// maxAttempts bounds how often Allocate picks another id after
	// losing the race for one to another node.
	maxAttempts = 16
	// randomTries is how many random ids selectID tries before it scans.
	randomTries = 64
	// maxScan bounds the linear scan of a huge range.
	maxScan = 1 << 24
	// unlockTimeout bounds releasing a kvstore lock.
	unlockTimeout = 10 * time.Second
	// stoppingUnlockTimeout bounds releasing a kvstore lock once the
	// caller's context has ended (the agent is stopping): stopping must
	// not wait for an unreachable etcd, and the lock's lease expires on
	// its own (Close revokes it when etcd is reachable).
	stoppingUnlockTimeout = time.Second
)

// errLostRace says that another node created the master key of the id
// we picked; Allocate then tries another id.
var errLostRace = errors.New("another node created the master key first")

// Allocate returns the id of key, allocating one if no node uses key yet,
// and takes a local reference. isNew is true when this call created the
// master key. The first reference writes this node's reference key; the
// following ones only count. It waits for the cache's first list.
func (a *Allocator[V]) Allocate(ctx context.Context, key string) (id ID, isNew bool, err error) {
	if key == "" {
		return 0, false, fmt.Errorf("allocate: %w: empty key", ErrInvalidKey)
	}
	unlock := a.keyMu.Lock(key)
	defer unlock()
	if id, ok := a.addLocalRef(key); ok {
		return id, false, nil
	}
	if err := a.WaitForSync(ctx); err != nil {
		return 0, false, fmt.Errorf("allocate %q: %w", key, err)
	}
	exclude := map[ID]struct{}{}
	for attempt := 1; ; attempt++ {
		id, isNew, err = a.allocateLocked(ctx, key, exclude)
		if err == nil {
			return id, isNew, nil
		}
		if !errors.Is(err, errLostRace) || attempt >= maxAttempts {
			return 0, false, fmt.Errorf("allocate %q: %w", key, err)
		}
		a.log.Debug("Lost the race for an id, trying another", "scope", a.opts.Scope, "key", key, "attempt", attempt)
	}
}

// allocateLocked runs one attempt under the kvstore lock of key.
func (a *Allocator[V]) allocateLocked(ctx context.Context, key string, exclude map[ID]struct{}) (ID, bool, error) {
	lock, err := a.opts.Backend.LockPath(ctx, a.paths.LockPath(key))
	if err != nil {
		return 0, false, err
	}
	defer a.unlock(ctx, lock, key)
	id, err := a.existingID(ctx, key)
	if err != nil {
		return 0, false, err
	}
	isNew := false
	if id == 0 {
		if id, err = a.createMaster(ctx, key, exclude); err != nil {
			return 0, false, err
		}
		defer a.unreserve(id)
		isNew = true
	}
	valueKey := a.paths.ValueKey(key, a.opts.Suffix)
	if _, err := a.opts.Backend.UpdateIfDifferent(ctx, valueKey, []byte(id.String()), true); err != nil {
		// A new master without reference is collected by the GC.
		return 0, false, fmt.Errorf("write reference %s: %w", valueKey, err)
	}
	a.setLocal(key, id)
	return id, isNew, nil
}

// existingID finds the id of key: from another node's reference, or from
// a master in the cache that a read confirms. 0 means none.
func (a *Allocator[V]) existingID(ctx context.Context, key string) (ID, error) {
	refs, err := a.references(ctx, key)
	if err != nil {
		return 0, err
	}
	if id := a.pickReference(refs, key); id != 0 {
		if k, ok := a.cache.keyOf(id); ok && k == key {
			return id, nil
		}
		// Referenced but not (yet) in the cache: make sure the master
		// exists and holds key.
		err := a.ensureMaster(ctx, id, key)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, ErrConflict) {
			return 0, err
		}
		a.log.Warn("Ignoring references to an id whose master holds another key",
			"scope", a.opts.Scope, "key", key, "id", id, "error", err)
	}
	id, ok := a.cache.lookupKey(key)
	if !ok {
		return 0, nil
	}
	v, err := a.opts.Backend.Get(ctx, a.paths.MasterKey(id))
	if err != nil {
		return 0, fmt.Errorf("read master key %s: %w", a.paths.MasterKey(id), err)
	}
	if string(v) != key {
		return 0, nil // the cache lags behind a deletion
	}
	return id, nil
}

// references lists the reference keys of key, by node suffix, with their
// ids. Values that are no id of the range are logged and skipped.
func (a *Allocator[V]) references(ctx context.Context, key string) (map[string]ID, error) {
	prefix := a.paths.ValuePrefix(key)
	pairs, err := a.opts.Backend.ListPrefix(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list references %s: %w", prefix, err)
	}
	out := map[string]ID{}
	for k, v := range pairs {
		suffix := strings.TrimPrefix(k, prefix)
		if strings.Contains(suffix, "/") {
			continue // a reference of a longer key
		}
		n, err := strconv.ParseUint(string(v.Data), 10, 64)
		if err != nil || ID(n) < a.opts.Min || ID(n) > a.opts.Max {
			a.log.Warn("Ignoring invalid reference", "scope", a.opts.Scope, "key", k, "value", string(v.Data),
				"range", fmt.Sprintf("%d..%d", a.opts.Min, a.opts.Max))
			continue
		}
		out[suffix] = ID(n)
	}
	return out, nil
}

// pickReference prefers an id whose master in the cache holds key, then
// the smallest one.
func (a *Allocator[V]) pickReference(refs map[string]ID, key string) ID {
	var best ID
	for _, id := range refs {
		if k, ok := a.cache.keyOf(id); ok && k == key {
			return id
		}
		if best == 0 || id < best {
			best = id
		}
	}
	return best
}

// ensureMaster creates the master key of id if it is missing; it fails
// with ErrConflict if it holds another key.
func (a *Allocator[V]) ensureMaster(ctx context.Context, id ID, key string) error {
	masterKey := a.paths.MasterKey(id)
	for range 3 { // the key may vanish between CreateOnly and Get
		created, err := a.opts.Backend.CreateOnly(ctx, masterKey, []byte(key), false)
		if err != nil {
			return fmt.Errorf("create master key %s: %w", masterKey, err)
		}
		if created {
			a.log.Warn("Re-created missing master key", "scope", a.opts.Scope, "key", masterKey)
			return nil
		}
		v, err := a.opts.Backend.Get(ctx, masterKey)
		switch {
		case err != nil:
			return fmt.Errorf("read master key %s: %w", masterKey, err)
		case v == nil:
			continue
		case string(v) != key:
			return fmt.Errorf("%w: %s holds %q", ErrConflict, masterKey, v)
		}
		return nil
	}
	return fmt.Errorf("create master key %s: it keeps being deleted", masterKey)
}

// createMaster picks a free id and creates its master key; the id stays
// reserved in this process until the caller unreserves it.
func (a *Allocator[V]) createMaster(ctx context.Context, key string, exclude map[ID]struct{}) (ID, error) {
	id, err := a.selectID(exclude)
	if err != nil {
		return 0, err
	}
	masterKey := a.paths.MasterKey(id)
	created, err := a.opts.Backend.CreateOnly(ctx, masterKey, []byte(key), false)
	if err != nil || !created {
		a.unreserve(id)
		exclude[id] = struct{}{}
		if err != nil {
			return 0, fmt.Errorf("create master key %s: %w", masterKey, err)
		}
		return 0, errLostRace
	}
	return id, nil
}

// selectID picks a random free id: not in the cache, not in local use,
// not being created by this process and not excluded.
func (a *Allocator[V]) selectID(exclude map[ID]struct{}) (ID, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	free := func(id ID) bool {
		_, local := a.localIDs[id]
		_, creating := a.creating[id]
		_, excluded := exclude[id]
		return !local && !creating && !excluded && !a.cache.occupied(id)
	}
	span := uint64(a.opts.Max-a.opts.Min) + 1
	if span == 0 { // the whole uint64 range
		span = ^uint64(0)
	}
	for range randomTries {
		if id := a.opts.Min + ID(rand.Uint64N(span)); free(id) {
			a.creating[id] = struct{}{}
			return id, nil
		}
	}
	start := rand.Uint64N(span)
	for i := range min(span, maxScan) {
		if id := a.opts.Min + ID((start+i)%span); free(id) {
			a.creating[id] = struct{}{}
			return id, nil
		}
	}
	return 0, fmt.Errorf("%w %d..%d", ErrNoFreeID, a.opts.Min, a.opts.Max)
}

func (a *Allocator[V]) unreserve(id ID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.creating, id)
}

func (a *Allocator[V]) addLocalRef(key string) (ID, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.local[key]
	if !ok {
		return 0, false
	}
	l.refs++
	return l.id, true
}

func (a *Allocator[V]) setLocal(key string, id ID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.local[key] = &localKey{id: id, refs: 1}
	a.localIDs[id] = key
	delete(a.pendingRelease, key)
}

// unlock releases a kvstore lock, even when ctx has ended (then within a
// shorter time).
func (a *Allocator[V]) unlock(ctx context.Context, lock kvstore.Unlocker, key string) {
	timeout := unlockTimeout
	if ctx.Err() != nil {
		timeout = stoppingUnlockTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := lock.Unlock(ctx); err != nil {
		a.log.Warn("Unlocking failed", "scope", a.opts.Scope, "lock", a.paths.LockPath(key), "error", err)
	}
}
