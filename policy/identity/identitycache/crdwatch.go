package identitycache

import (
	"context"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/policy/identity"
)

// Watch feeds the cache from the events of the CiliumIdentity resource
// until ctx ends or the stream closes; the first Sync completes the
// first list (WaitForSync returns, the events' Synced runs, then
// onSynced if not nil).
func (a *CRDAllocator) Watch(ctx context.Context, events <-chan k8s.Event[*unstructured.Unstructured], onSynced func()) {
	for ev := range events {
		switch ev.Kind {
		case k8s.Upsert:
			a.upsert(ev.Object)
		case k8s.Delete:
			a.delete(ev.Key.Name)
		case k8s.Sync:
			if a.markSynced() && onSynced != nil {
				onSynced()
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// markSynced completes the first list; false if it was complete.
func (a *CRDAllocator) markSynced() bool {
	a.mu.Lock()
	if a.synced {
		a.mu.Unlock()
		return false
	}
	a.synced = true
	a.mu.Unlock()
	close(a.syncedCh)
	if a.events.Synced != nil {
		a.events.Synced()
	}
	return true
}

// upsert adds or replaces an identity; one that does not decode, or is
// not of this cluster, is skipped (and listed by Invalid) while its
// name stays taken.
func (a *CRDAllocator) upsert(obj *unstructured.Unstructured) {
	if obj == nil {
		return
	}
	e, err := newCRDEntry(a.cluster, obj)
	name := obj.GetName()
	a.mu.Lock()
	old := a.byID[e.idOr(name)]
	if err != nil {
		a.invalid[name] = err
		a.mu.Unlock()
		a.log.Warn("Skipping a CiliumIdentity", "name", name, "error", err)
		if old != nil {
			a.removeLocked(old)
			a.tell(old, nil)
		}
		return
	}
	delete(a.invalid, name)
	if old != nil && old.key != e.key {
		a.removeLocked(old)
	}
	a.byID[e.id] = e
	if a.byKey[e.key] == nil {
		a.byKey[e.key] = map[allocator.ID]*crdEntry{}
	}
	a.byKey[e.key][e.id] = e
	a.mu.Unlock()
	if old != nil && old.key == e.key {
		return // only its metadata changed
	}
	a.tell(old, e)
}

// idOr returns the entry's id, or the id the name spells (0 if none).
func (e *crdEntry) idOr(name string) allocator.ID {
	if e != nil {
		return e.id
	}
	n, _ := strconv.ParseUint(name, 10, 64)
	return allocator.ID(n)
}

func (a *CRDAllocator) delete(name string) {
	n, _ := strconv.ParseUint(name, 10, 64)
	a.mu.Lock()
	delete(a.invalid, name)
	old := a.byID[allocator.ID(n)]
	if old == nil {
		a.mu.Unlock()
		return
	}
	a.removeLocked(old)
	l, inUse := a.local[old.key]
	inUse = inUse && l.id == old.id
	a.mu.Unlock()
	a.tell(old, nil)
	if inUse {
		select { // re-create it (RunSync)
		case a.resync <- struct{}{}:
		default:
		}
	}
}

func (a *CRDAllocator) removeLocked(e *crdEntry) {
	delete(a.byID, e.id)
	if m := a.byKey[e.key]; m != nil {
		delete(m, e.id)
		if len(m) == 0 {
			delete(a.byKey, e.key)
		}
	}
}

// tell passes a replacement of old by e (either may be nil) to the
// events.
func (a *CRDAllocator) tell(old, e *crdEntry) {
	if old != nil && a.events.Delete != nil {
		a.events.Delete(old.id, old.identity)
	}
	if e != nil && a.events.Upsert != nil {
		a.events.Upsert(e.id, e.identity)
	}
}

// RunSync runs SyncLocalKeys every interval, and at once when an
// identity in local use is deleted, until ctx ends.
func (a *CRDAllocator) RunSync(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.resync:
		}
		if err := a.SyncLocalKeys(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("Repairing the identities in local use failed", "error", err)
		}
	}
}

// Invalid lists the CiliumIdentities skipped, with why, by name.
func (a *CRDAllocator) Invalid() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.invalid))
	for name, err := range a.invalid {
		out = append(out, name+": "+err.Error())
	}
	slices.Sort(out)
	return out
}

// Len returns the number of identities in the cache.
func (a *CRDAllocator) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byID)
}

// Lookup returns the oldest identity of a canonical label list in the
// cache.
func (a *CRDAllocator) Lookup(key string) (*identity.Identity, bool) {
	if e := a.oldest(key); e != nil {
		return e.identity, true
	}
	return nil, false
}
