package selectorcache

import (
	"slices"

	"github.com/apiary-net/apiary/policy/identity"
)

// selectionDelta collects the identities one selector gained and lost
// in a batch.
type selectionDelta struct {
	added, deleted []identity.NumericIdentity
}

// OnIdentitiesChanged updates the selections for a batch of identity
// changes and then tells each affected selector's users, once per
// selector, which identities it gained and lost. An identity added again
// with other labels is treated as deleted and re-added.
//
// Afterwards, with the cache unlocked, the functions registered with
// OnApplied are called: endpoint policies now hold the map changes the
// batch caused, ready for EndpointPolicy.ConsumeMapChanges.
func (c *Cache) OnIdentitiesChanged(changes []identity.Change) {
	c.apply(changes)
	c.appliedMu.Lock()
	fns := slices.Clone(c.applied)
	c.appliedMu.Unlock()
	for _, fn := range fns {
		fn(changes)
	}
}

// OnApplied registers fn to be called after every batch of identity
// changes the cache has applied (and passed on to the selectors' users),
// from the goroutine that delivered the batch, in order. The datapath
// consumes the endpoints' map changes there. fn may lock the cache.
func (c *Cache) OnApplied(fn func(changes []identity.Change)) {
	c.appliedMu.Lock()
	defer c.appliedMu.Unlock()
	c.applied = append(c.applied, fn)
}

func (c *Cache) apply(changes []identity.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	deltas := make(map[*CachedSelector]*selectionDelta)
	var order []*CachedSelector
	delta := func(cs *CachedSelector) *selectionDelta {
		d, ok := deltas[cs]
		if !ok {
			d = &selectionDelta{}
			deltas[cs] = d
			order = append(order, cs)
		}
		return d
	}
	for _, ch := range changes {
		if ch.Identity == nil {
			continue
		}
		id := ch.Identity.ID
		if _, known := c.identities[id]; known {
			c.deleteIdentity(id, delta)
		}
		if ch.Kind == identity.Added {
			c.addIdentity(ch.Identity, delta)
		}
	}
	for _, cs := range order {
		d := deltas[cs]
		if len(d.added) == 0 && len(d.deleted) == 0 {
			continue
		}
		for u := range cs.users {
			u.IdentitySelectionUpdated(cs, d.added, d.deleted)
		}
	}
}

func (c *Cache) addIdentity(ident *identity.Identity, delta func(*CachedSelector) *selectionDelta) {
	c.identities[ident.ID] = ident.Labels
	c.index.add(ident.ID, ident.Labels)
	c.selIndex.candidates(ident.Labels, func(cs *CachedSelector) {
		if cs.selector.Matches(ident.Labels) {
			cs.selections[ident.ID] = struct{}{}
			d := delta(cs)
			d.added = appendOrCancel(d.added, &d.deleted, ident.ID)
		}
	})
}

func (c *Cache) deleteIdentity(id identity.NumericIdentity, delta func(*CachedSelector) *selectionDelta) {
	ls := c.identities[id]
	c.index.remove(id, ls)
	delete(c.identities, id)
	c.selIndex.candidates(ls, func(cs *CachedSelector) {
		if _, ok := cs.selections[id]; ok {
			delete(cs.selections, id)
			d := delta(cs)
			d.deleted = appendOrCancel(d.deleted, &d.added, id)
		}
	})
}

// appendOrCancel appends id to list unless it is pending in opposite, in
// which case the two cancel out.
func appendOrCancel(list []identity.NumericIdentity, opposite *[]identity.NumericIdentity, id identity.NumericIdentity) []identity.NumericIdentity {
	for i, o := range *opposite {
		if o == id {
			*opposite = append((*opposite)[:i], (*opposite)[i+1:]...)
			return list
		}
	}
	return append(list, id)
}
