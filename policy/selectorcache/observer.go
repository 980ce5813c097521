package selectorcache

import "github.com/apiary-net/apiary/policy/identity"

// selectionDelta collects the identities one selector gained and lost
// in a batch.
type selectionDelta struct {
	added, deleted []identity.NumericIdentity
}

// OnIdentitiesChanged updates the selections for a batch of identity
// changes and then tells each affected selector's users, once per
// selector, which identities it gained and lost. An identity added again
// with other labels is treated as deleted and re-added.
func (c *Cache) OnIdentitiesChanged(changes []identity.Change) {
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
