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

	// sticky is the number each label set had last (from the journal
	// and every assignment since), kept after release: the same labels
	// get the same number again while no other set took it.
	sticky      map[string]identity.NumericIdentity
	stickyOwner map[identity.NumericIdentity]string
	journal     *journal // nil: numbers are not kept across restarts
}

type memEntry struct {
	identity *identity.Identity
	key      string
	refs     int
}

func newMemAllocator(first, last identity.NumericIdentity, n *notifier) *memAllocator {
	return &memAllocator{first: first, last: last, next: first, notify: n,
		byKey: map[string]*memEntry{}, byID: map[identity.NumericIdentity]*memEntry{},
		sticky: map[string]identity.NumericIdentity{}, stickyOwner: map[identity.NumericIdentity]string{}}
}

// persist loads the numbers kept in the journal at path and records
// every new assignment there from now on. It is called once, before the
// first allocation.
func (m *memAllocator) persist(path string) error {
	j, assigned, err := openJournal(path, m.first, m.last)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.journal = j
	for key, id := range assigned {
		m.sticky[key], m.stickyOwner[id] = id, key
	}
	for key, e := range m.byKey { // allocated before persist: keep them too
		if err := m.stickLocked(key, e.identity.ID); err != nil {
			return err
		}
	}
	return nil
}

// closeJournal stops recording.
func (m *memAllocator) closeJournal() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.journal == nil {
		return nil
	}
	err := m.journal.close()
	m.journal = nil
	return err
}

// pickIDLocked is the number of a new label set: the one it had last
// while free, else the next free one no other set had last, else any
// free one.
func (m *memAllocator) pickIDLocked(key string) (identity.NumericIdentity, error) {
	if id, ok := m.sticky[key]; ok {
		if _, used := m.byID[id]; !used {
			return id, nil
		}
	}
	if id, err := m.freeIDLocked(true); err == nil {
		return id, nil
	}
	return m.freeIDLocked(false)
}

// stickLocked records that key has id, in memory and in the journal.
func (m *memAllocator) stickLocked(key string, id identity.NumericIdentity) error {
	if m.sticky[key] == id && m.stickyOwner[id] == key {
		return nil
	}
	if m.journal != nil {
		if err := m.journal.record(id, key); err != nil {
			return err
		}
	}
	if old, ok := m.stickyOwner[id]; ok {
		delete(m.sticky, old)
	}
	if old, ok := m.sticky[key]; ok {
		delete(m.stickyOwner, old)
	}
	m.sticky[key], m.stickyOwner[id] = id, key
	return nil
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
	id, err := m.pickIDLocked(key)
	if err != nil {
		return nil, false, err
	}
	if err := m.stickLocked(key, id); err != nil {
		return nil, false, fmt.Errorf("allocate identity: %w", err)
	}
	e := &memEntry{identity: &identity.Identity{ID: id, Labels: lbls}, key: key, refs: 1}
	m.byKey[key], m.byID[id] = e, e
	m.notify.enqueue(identity.Change{Kind: identity.Added, Identity: e.identity})
	return e.identity, true, nil
}

// freeIDLocked returns the next unused id after the last one handed out,
// so that a released id is not reused at once; notSticky skips the ids
// another label set had last.
func (m *memAllocator) freeIDLocked(notSticky bool) (identity.NumericIdentity, error) {
	span := uint64(m.last-m.first) + 1
	for range span {
		id := m.next
		if m.next == m.last {
			m.next = m.first
		} else {
			m.next++
		}
		if _, used := m.byID[id]; used {
			continue
		}
		if _, had := m.stickyOwner[id]; notSticky && had {
			continue
		}
		return id, nil
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
