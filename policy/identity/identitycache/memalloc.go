package identitycache

import (
	"fmt"
	"sync"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// memAllocator hands out the ids of a range in memory, with reference
// counts: an identity goes away with its last reference. It allocates the
// local (CIDR) identities, and the global ones in standalone mode.
type memAllocator struct {
	first, last identity.NumericIdentity
	notify      *notifier

	mu    sync.Mutex
	next  identity.NumericIdentity
	byKey map[string]*memEntry
	byID  map[identity.NumericIdentity]*memEntry
}

type memEntry struct {
	identity *identity.Identity
	key      string
	refs     int
}

func newMemAllocator(first, last identity.NumericIdentity, n *notifier) *memAllocator {
	return &memAllocator{first: first, last: last, next: first, notify: n,
		byKey: map[string]*memEntry{}, byID: map[identity.NumericIdentity]*memEntry{}}
}

// allocate returns the identity of lbls and takes a reference; isNew is
// true for the first one.
func (m *memAllocator) allocate(lbls labels.Labels) (*identity.Identity, bool, error) {
	key := kvstoreKey(lbls)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byKey[key]; ok {
		e.refs++
		return e.identity, false, nil
	}
	id, err := m.freeIDLocked()
	if err != nil {
		return nil, false, err
	}
	e := &memEntry{identity: &identity.Identity{ID: id, Labels: lbls}, key: key, refs: 1}
	m.byKey[key], m.byID[id] = e, e
	m.notify.enqueue(identity.Change{Kind: identity.Added, Identity: e.identity})
	return e.identity, true, nil
}

// freeIDLocked returns the next unused id after the last one handed out,
// so that a released id is not reused at once.
func (m *memAllocator) freeIDLocked() (identity.NumericIdentity, error) {
	span := uint64(m.last-m.first) + 1
	for range span {
		id := m.next
		if m.next == m.last {
			m.next = m.first
		} else {
			m.next++
		}
		if _, used := m.byID[id]; !used {
			return id, nil
		}
	}
	return 0, fmt.Errorf("allocate identity: every id of %d..%d is in use", m.first, m.last)
}

// release drops a reference; released is true for the last one.
func (m *memAllocator) release(id identity.NumericIdentity) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byID[id]
	if !ok {
		return false, fmt.Errorf("release identity %d: %w", id, ErrNotAllocated)
	}
	e.refs--
	if e.refs > 0 {
		return false, nil
	}
	delete(m.byID, id)
	delete(m.byKey, e.key)
	m.notify.enqueue(identity.Change{Kind: identity.Deleted, Identity: e.identity})
	return true, nil
}

func (m *memAllocator) lookup(lbls labels.Labels) *identity.Identity {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byKey[kvstoreKey(lbls)]; ok {
		return e.identity
	}
	return nil
}

func (m *memAllocator) get(id identity.NumericIdentity) *identity.Identity {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byID[id]; ok {
		return e.identity
	}
	return nil
}

func (m *memAllocator) list() []*identity.Identity {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*identity.Identity, 0, len(m.byID))
	for _, e := range m.byID {
		out = append(out, e.identity)
	}
	return out
}

func (m *memAllocator) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}
