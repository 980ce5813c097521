package selectorcache

import (
	"iter"
	"maps"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// SelectionUser is told how the selections of a CachedSelector it uses
// change. It is called with the cache locked and must not call back
// into the cache's locking methods.
type SelectionUser interface {
	IdentitySelectionUpdated(sel *CachedSelector, added, deleted []identity.NumericIdentity)
}

// CachedSelector is one distinct selector in the cache, with the
// identities it selects and its users.
type CachedSelector struct {
	selector   Selector
	indexKeys  []string // see selectorIndex
	selections map[identity.NumericIdentity]struct{}
	users      map[SelectionUser]int
}

// Selector returns the selector.
func (cs *CachedSelector) Selector() Selector { return cs.selector }

// String returns the selector's key.
func (cs *CachedSelector) String() string { return cs.selector.Key() }

// Selections returns the selected identities, sorted. It does not lock:
// call it from Cache.Locked or from a SelectionUser callback.
func (cs *CachedSelector) Selections() []identity.NumericIdentity {
	out := make([]identity.NumericIdentity, 0, len(cs.selections))
	for id := range cs.selections {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Len returns the number of selected identities. Same locking as
// Selections.
func (cs *CachedSelector) Len() int { return len(cs.selections) }

// All returns the selected identities in no particular order, without
// copying them. Same locking as Selections; the selections must not
// change while the sequence runs.
func (cs *CachedSelector) All() iter.Seq[identity.NumericIdentity] {
	return maps.Keys(cs.selections)
}

// Cache is the selector cache. The zero value is not usable; use New.
type Cache struct {
	mu         sync.Mutex
	identities map[identity.NumericIdentity]labels.Labels
	index      labelIndex
	selIndex   selectorIndex
	selectors  map[string]*CachedSelector

	appliedMu sync.Mutex
	applied   []func([]identity.Change) // see OnApplied
}

var _ identity.Observer = (*Cache)(nil)

// New returns an empty cache. Feed it the known identities with
// OnIdentitiesChanged (the identity cell does so through an observer).
func New() *Cache {
	return &Cache{
		identities: make(map[identity.NumericIdentity]labels.Labels),
		index:      make(labelIndex),
		selIndex:   newSelectorIndex(),
		selectors:  make(map[string]*CachedSelector),
	}
}

// Locked runs fn with the cache locked: selections stay as they are and
// no user is called until fn returns.
func (c *Cache) Locked(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn()
}

// AddSelectorLocked registers user for sel and returns the shared
// CachedSelector, computing its selections from the known identities if
// sel is new. Call it from Locked.
func (c *Cache) AddSelectorLocked(sel Selector, user SelectionUser) *CachedSelector {
	key := sel.Key()
	cs, ok := c.selectors[key]
	if !ok {
		cs = &CachedSelector{
			selector:   sel,
			selections: make(map[identity.NumericIdentity]struct{}),
			users:      make(map[SelectionUser]int),
		}
		c.selectInitial(cs)
		c.selectors[key] = cs
		c.selIndex.add(cs)
	}
	cs.users[user]++
	return cs
}

// selectInitial fills the selections of a new selector from the known
// identities, through the label index where the selector allows.
func (c *Cache) selectInitial(cs *CachedSelector) {
	if ids, keys, ok := c.index.candidates(cs.selector); ok {
		cs.indexKeys = keys
		for _, id := range ids {
			if cs.selector.Matches(c.identities[id]) {
				cs.selections[id] = struct{}{}
			}
		}
		return
	}
	for id, ls := range c.identities {
		if cs.selector.Matches(ls) {
			cs.selections[id] = struct{}{}
		}
	}
}

// RemoveSelectorLocked drops one registration of user for cs; the
// selector leaves the cache with its last user. Call it from Locked.
func (c *Cache) RemoveSelectorLocked(cs *CachedSelector, user SelectionUser) {
	if n := cs.users[user]; n > 1 {
		cs.users[user] = n - 1
		return
	}
	delete(cs.users, user)
	if len(cs.users) == 0 {
		delete(c.selectors, cs.selector.Key())
		c.selIndex.remove(cs)
	}
}

// Len returns the number of distinct selectors in the cache.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.selectors)
}

// Identities returns the labels of every known identity. Call it from
// Locked; the map must not be modified.
func (c *Cache) Identities() map[identity.NumericIdentity]labels.Labels { return c.identities }
