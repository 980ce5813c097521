package policymap

import (
	"errors"
	"fmt"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// ErrNoBaseline is returned by Apply on a map that was never synced by
// this Map value.
var ErrNoBaseline = errors.New("policy map has no synced state: call Sync first")

// scope groups keys whose deny entries can cover each other's: one
// direction and one peer identity (0: any peer).
type scope struct {
	dir policy.Direction
	id  identity.NumericIdentity
}

// shadow is what the map holds, as the agent last wrote it: the map
// state and its translation, with the deny keys indexed by scope.
type shadow struct {
	state   policy.MapState
	written map[Key]Entry
	denies  map[scope]map[policy.Key]struct{}
}

func newShadow(state policy.MapState, written map[Key]Entry) *shadow {
	s := &shadow{state: state.Clone(), written: written, denies: make(map[scope]map[policy.Key]struct{})}
	for k, e := range s.state {
		if e.Deny {
			s.addDeny(k)
		}
	}
	return s
}

func (s *shadow) addDeny(k policy.Key) {
	sc := scope{k.Direction, k.Identity}
	if s.denies[sc] == nil {
		s.denies[sc] = make(map[policy.Key]struct{})
	}
	s.denies[sc][k] = struct{}{}
}

func (s *shadow) removeDeny(k policy.Key) {
	delete(s.denies[scope{k.Direction, k.Identity}], k)
}

// covered reports whether a deny key of k's scope or of its direction's
// any-peer scope covers k.
func (s *shadow) covered(k policy.Key) bool {
	for _, sc := range []scope{{k.Direction, k.Identity}, {k.Direction, 0}} {
		for d := range s.denies[sc] {
			if coveredBy(k, []policy.Key{d}) {
				return true
			}
		}
		if k.Identity == 0 {
			break
		}
	}
	return false
}

// Apply writes an incremental change of the map state (from
// EndpointPolicy.ConsumeMapChanges) relative to the state of the last
// Sync or Apply, touching only the keys the change affects: the changed
// keys, and, when a deny key comes or goes, the allow keys it covers. It
// refuses, writing nothing, a change that makes the state larger than the
// map or holds a key the map cannot express.
func (m *Map) Apply(ch policy.MapChanges) (added, removed int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.shadow
	if s == nil {
		return 0, 0, fmt.Errorf("apply to policy map of endpoint %d: %w", m.epID, ErrNoBaseline)
	}
	size := len(s.state)
	for k := range ch.Adds {
		if _, err := NewKey(k); err != nil {
			return 0, 0, fmt.Errorf("apply to policy map of endpoint %d: %w", m.epID, err)
		}
		if _, ok := s.state[k]; !ok {
			size++
		}
	}
	for _, k := range ch.Deletes {
		if _, ok := s.state[k]; ok {
			if _, readded := ch.Adds[k]; !readded {
				size--
			}
		}
	}
	if max := m.m.MaxEntries(); size > int(max) {
		return 0, 0, m.fullError(size)
	}
	touched := s.change(ch)
	var plan syncPlan
	for k := range touched {
		mk, _ := NewKey(k) // every key in the state or the change was validated
		e, inState := s.state[k]
		old, inMap := s.written[mk]
		if !inState {
			if inMap {
				plan.remove(mk, old)
				delete(s.written, mk)
			}
			continue
		}
		want := Entry{Deny: e.Deny || s.covered(k), L4Prefixlen: mk.l4Prefixlen()}
		if !inMap || old != want {
			plan.add(mk, want)
			s.written[mk] = want
		}
	}
	if err := plan.apply(m); err != nil {
		m.shadow = nil // the map's content is unknown now: the next Sync dumps it
		return 0, 0, fmt.Errorf("apply to policy map of endpoint %d: %w", m.epID, err)
	}
	return len(plan.addDeny) + len(plan.addAllow), len(plan.delDeny) + len(plan.delAllow), nil
}

// change applies ch to the shadow's state and deny index and returns the
// keys whose map entries may differ now.
func (s *shadow) change(ch policy.MapChanges) map[policy.Key]struct{} {
	touched := make(map[policy.Key]struct{}, ch.Len())
	var denyScopes []scope
	note := func(k policy.Key, e policy.Entry, ok bool) {
		touched[k] = struct{}{}
		if ok && e.Deny {
			denyScopes = append(denyScopes, scope{k.Direction, k.Identity})
		}
	}
	for _, k := range ch.Deletes {
		e, ok := s.state[k]
		note(k, e, ok)
		if ok && e.Deny {
			s.removeDeny(k)
		}
		delete(s.state, k)
	}
	for k, e := range ch.Adds {
		old, ok := s.state[k]
		note(k, old, ok)
		note(k, e, true)
		if ok && old.Deny {
			s.removeDeny(k)
		}
		if e.Deny {
			s.addDeny(k)
		}
		s.state[k] = e
	}
	// A deny key that came or went changes the allow keys it covers.
	for _, sc := range denyScopes {
		for k, e := range s.state {
			if !e.Deny && k.Direction == sc.dir && (sc.id == 0 || k.Identity == sc.id) {
				touched[k] = struct{}{}
			}
		}
	}
	return touched
}
