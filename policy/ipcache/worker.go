package ipcache

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/policy/identity"
)

// retryBackoff is the wait before prefixes whose identity could not be
// allocated are tried again: allocation writes to etcd, which every
// agent's ipcache retries after an etcd restart.
var retryBackoff = job.Backoff{Min: 100 * time.Millisecond, Max: 30 * time.Second, Factor: 2}

// allocateTimeout bounds one identity allocation.
const allocateTimeout = 30 * time.Second

// heldIdentity is an identity the cache allocated for a prefix, with the
// key of the labels it was allocated for.
type heldIdentity struct {
	key string
	id  *identity.Identity
}

// pending is a dirty prefix with what its contributions say.
type pending struct {
	prefix netip.Prefix
	rev    Revision
	m      merged
	ok     bool // false: nothing gives the prefix an identity, delete it
	next   *Entry
	failed bool
}

// run is the worker: it resolves dirty prefixes until ctx ends.
func (c *Cache) run(ctx context.Context, health cell.Health) error {
	health.OK("resolving")
	failures := 0
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.wake:
		case <-retry:
			retry = nil
			c.requeueFailed()
		}
		failed, err := c.round(ctx)
		switch {
		case failed > 0 && retry == nil:
			failures++
			wait := retryBackoff.Duration(failures)
			health.Degraded(fmt.Sprintf("%d prefixes wait for an identity, retrying in %s", failed, wait), err)
			retry = time.After(wait)
		case failed == 0 && c.failedCount() == 0:
			if failures > 0 {
				health.OK("resolving")
			}
			failures = 0
		}
	}
}

func (c *Cache) failedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.failed)
}

// requeueFailed marks the prefixes that failed dirty again.
func (c *Cache) requeueFailed() {
	c.mu.Lock()
	for p, rev := range c.failed {
		c.markDirtyLocked(p, rev)
	}
	c.mu.Unlock()
	c.signal()
}

// round resolves the prefixes that are dirty now, commits the entries,
// tells the listeners and advances the revision. It returns how many
// prefixes failed and the last error.
func (c *Cache) round(ctx context.Context) (int, error) {
	batch, target := c.takeDirty()
	if len(batch) == 0 {
		return 0, nil
	}
	var releases []*identity.Identity
	failed := 0
	var lastErr error
	for i := range batch {
		rel, err := c.resolve(ctx, &batch[i])
		if err != nil {
			failed++
			lastErr = err
			c.log.Warn("Unable to resolve the identity of a prefix, will retry",
				"prefix", batch[i].prefix, "labels", batch[i].m.labels.String(), "error", err)
			continue
		}
		if rel != nil {
			releases = append(releases, rel)
		}
	}
	changes, applied := c.commit(batch, target)
	if len(changes) > 0 {
		for _, l := range c.listeners {
			l.OnIPCacheChanged(target, changes)
		}
	}
	c.release(ctx, releases)
	c.advance(applied)
	return failed, lastErr
}

// takeDirty takes the dirty prefixes with their merged metadata and the
// revision they bring the cache to.
func (c *Cache) takeDirty() ([]pending, Revision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	batch := make([]pending, len(c.dirty))
	for i, p := range c.dirty {
		m, ok := c.prefixes[p].contributions().merge()
		batch[i] = pending{prefix: p, rev: c.dirtyRev[p], m: m, ok: ok}
	}
	if len(c.dirty) > keepDirty {
		// A listing made them large: do not hold its size for good.
		c.dirty, c.dirtyRev = nil, map[netip.Prefix]Revision{}
	} else {
		c.dirty = c.dirty[:0]
		clear(c.dirtyRev)
	}
	return batch, c.queued
}

// keepDirty is the most dirty prefixes whose slice and map takeDirty
// keeps for the next round; larger ones (a listing of a cluster's
// endpoints) are dropped, as each would stay at its largest size (a
// node's worth of megabytes on every node) after it is emptied.
const keepDirty = 1024

// resolve computes the entry of a pending prefix, allocating an identity
// for its labels if needed, and returns an identity to release once the
// change is committed.
func (c *Cache) resolve(ctx context.Context, pd *pending) (*identity.Identity, error) {
	old, hadHeld := c.held[pd.prefix]
	if !pd.ok {
		delete(c.held, pd.prefix)
		return old.id, nil
	}
	e := pd.m.entry
	e.Prefix = pd.prefix
	if e.Identity != 0 {
		pd.next = &e
		delete(c.held, pd.prefix)
		return old.id, nil
	}
	id, held, err := c.identityFor(ctx, pd.prefix, pd.m, old)
	if err != nil {
		pd.failed = true
		return nil, err
	}
	e.Identity = id
	pd.next = &e
	if held.id == nil {
		delete(c.held, pd.prefix)
		return old.id, nil
	}
	c.held[pd.prefix] = held
	if hadHeld && old.id != held.id {
		return old.id, nil
	}
	return nil, nil
}

// identityFor resolves labels: reserved identities as they are, CIDR-only
// labels to the prefix's CIDR identity, anything else to a global
// identity. An identity already held for the same labels is reused.
func (c *Cache) identityFor(ctx context.Context, p netip.Prefix, m merged, held heldIdentity) (identity.NumericIdentity, heldIdentity, error) {
	if id, ok := reservedFor(p, m.labels); ok {
		return id, heldIdentity{}, nil
	}
	key, lbls := "cidr", m.labels
	if !isCIDROnly(m.labels) {
		key = m.labels.SortedList()
	}
	if held.id != nil && held.key == key {
		return held.id.ID, held, nil
	}
	if key == "cidr" {
		lbls = identity.CIDRLabels(p)
	}
	actx, cancel := context.WithTimeout(ctx, allocateTimeout)
	defer cancel()
	id, _, err := c.alloc.AllocateIdentity(actx, lbls)
	if err != nil {
		return 0, heldIdentity{}, fmt.Errorf("allocate identity for %s: %w", p, err)
	}
	return id.ID, heldIdentity{key: key, id: id}, nil
}

// commit stores the resolved entries and returns the changes and the
// revision the cache is at once the listeners have them.
func (c *Cache) commit(batch []pending, target Revision) ([]Change, Revision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	changes := make([]Change, 0, len(batch))
	for i := range batch {
		pd := &batch[i]
		if pd.failed {
			if old, ok := c.failed[pd.prefix]; !ok || pd.rev < old {
				c.failed[pd.prefix] = pd.rev
			}
			continue
		}
		delete(c.failed, pd.prefix)
		old := c.entryLocked(pd.prefix)
		if sameEntry(old, pd.next) {
			c.compactLocked(pd.prefix)
			continue
		}
		c.setEntryLocked(pd.prefix, pd.next)
		c.compactLocked(pd.prefix)
		changes = append(changes, Change{Prefix: pd.prefix, Old: old, New: pd.next})
	}
	applied := target
	for _, rev := range c.failed {
		applied = min(applied, rev-1)
	}
	return changes, applied
}

// release drops the references on identities the cache no longer uses.
func (c *Cache) release(ctx context.Context, ids []*identity.Identity) {
	for _, id := range ids {
		if id == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, allocateTimeout)
		if _, err := c.alloc.Release(rctx, id); err != nil {
			c.log.Warn("Unable to release an identity", "identity", id.ID, "error", err)
		}
		cancel()
	}
}

// advance moves the revision forward and wakes the waiters.
func (c *Cache) advance(rev Revision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev <= c.applied {
		return
	}
	c.applied = rev
	close(c.advanced)
	c.advanced = make(chan struct{})
}
