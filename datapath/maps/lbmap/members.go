package lbmap

import (
	"slices"

	"github.com/apiary-net/apiary/datapath"
)

// member is a backend of a frontend, with its id, as the frontend's last
// upsert gave it. A frontend's members are sorted by address; the
// frontend is among the refs of each member's backend record. No
// pointers (32 bytes): 100,000 members are no work for the GC.
type member struct {
	addr      addrKey
	clusterID uint32
	state     datapath.BackendState
	id        uint32
}

// joiner is a backend that becomes active in a frontend: its id and its
// index in the service's list (new backends take slots in that order).
type joiner struct {
	pos int32
	id  uint32
}

// upsertScratch is the writer's room for one upsert, reused by the next
// one so that a change allocates nothing.
type upsertScratch struct {
	in      desired  // the service being written
	next    []member // its new members, sorted by address
	gone    []uint32 // ids of members the frontend no longer uses
	leaving []uint32 // ids of active members that stop being active
	joining []joiner // members that become active
	active  []uint32 // every active member's id, in the service's order (full path)
	slots   []uint32 // the slots to write
	fresh   []uint32 // the joining ids, in the service's order (changedSlots)
	peek    uint32   // a member id read early (UpsertService)
}

// diffMembers makes d's backends the members of s: it references the new
// and changed ones (every one when !fast) and records in w.scratch the
// new members, the gone ones and the slot changes. The old members stay
// referenced until writeMembers drops the gone ones after the writes.
//
// fast: s's last write succeeded whole (s.synced), so an unchanged
// member (same address, cluster and state) is skipped: no lookup in
// w.backends or w.byAddr, nothing written. That is correct because a
// shared backend's entry holds the most active state any of its
// frontends gives it (and the cluster of the last frontend that changed
// it): every frontend rewrites the entry when its own contribution
// changes (reference, release; a rewrite that fails sends the
// backend's frontends down the full path), and an unchanged member
// contributes what it did at s's last write, which already left the
// entry right. The entry and id of a member stay while s references it
// (release deletes only unreferenced backends), so the id kept is
// still its id.
func (w *Writer) diffMembers(s *serviceEntry, d *desired, fast bool) error {
	x := &w.scratch
	old := s.members
	x.next, x.gone, x.leaving, x.joining = x.next[:0], x.gone[:0], x.leaving[:0], x.joining[:0]
	if !fast {
		x.active = slices.Grow(x.active[:0], len(d.backends))[:len(d.backends)]
	}
	i := 0
	for k := range d.backends {
		// Keys are compared where they are, through pointers: a copy
		// read back right after it was written stalls the CPU.
		b := d.sorted(k)
		for i < len(old) && old[i].addr != b.key && keyLess(&old[i].addr, &b.key) {
			x.drop(old[i])
			i++
		}
		var prev *member
		if i < len(old) && old[i].addr == b.key {
			prev = &old[i]
			i++
		}
		var id uint32
		if fast && prev != nil && prev.clusterID == b.clusterID && prev.state == b.state {
			id = prev.id
		} else {
			be, err := w.reference(b, s.key)
			if err != nil {
				s.members = unite(old, x.next)
				return err
			}
			id = be.id
		}
		x.next = append(x.next, member{})
		m := &x.next[len(x.next)-1]
		m.addr, m.clusterID, m.state, m.id = b.key, b.clusterID, b.state, id
		x.track(prev, m, d.pos(k))
		if !fast {
			x.active[d.pos(k)] = 0
			if m.state == datapath.BackendActive {
				x.active[d.pos(k)] = m.id
			}
		}
	}
	for ; i < len(old); i++ {
		x.drop(old[i])
	}
	if !fast {
		x.active = slices.DeleteFunc(x.active, func(id uint32) bool { return id == 0 })
		// Members read back from the maps may disagree with the ids of
		// their addresses now: never drop an id the frontend uses.
		used := newIDSet(x.next, func(m member) uint32 { return m.id })
		x.gone = slices.DeleteFunc(x.gone, used.has)
	}
	return nil
}

// drop records that old member m is gone.
func (x *upsertScratch) drop(m member) {
	x.gone = append(x.gone, m.id)
	if m.state == datapath.BackendActive {
		x.leaving = append(x.leaving, m.id)
	}
}

// track records the slot changes of member m (prev: what it was, nil if
// new), at index pos of the service's list.
func (x *upsertScratch) track(prev, m *member, pos int) {
	wasActive := prev != nil && prev.state == datapath.BackendActive
	stays := wasActive && prev.id == m.id
	if wasActive && (m.state != datapath.BackendActive || !stays) {
		x.leaving = append(x.leaving, prev.id)
	}
	if m.state == datapath.BackendActive && !stays {
		x.joining = append(x.joining, joiner{pos: int32(pos), id: m.id})
	}
	if prev != nil && prev.id != m.id {
		x.gone = append(x.gone, prev.id)
	}
}

// unite returns the members of old and next, sorted by address, each
// (address, id) once, next's when both have it: the references a
// frontend holds after an upsert that failed half way.
func unite(old, next []member) []member {
	out := make([]member, 0, len(old)+len(next))
	i, j := 0, 0
	for i < len(old) || j < len(next) {
		switch {
		case j == len(next) || i < len(old) && compareKeys(old[i].addr, next[j].addr) < 0:
			out = append(out, old[i])
			i++
		case i == len(old) || compareKeys(next[j].addr, old[i].addr) < 0:
			out = append(out, next[j])
			j++
		default:
			if old[i].id != next[j].id {
				out = append(out, old[i])
			}
			out = append(out, next[j])
			i, j = i+1, j+1
		}
	}
	return out
}

// sortMembers sorts ms by address and removes repeated ids (members
// read back from the slots of a service).
func sortMembers(ms []member) []member {
	slices.SortFunc(ms, func(a, b member) int {
		if c := compareKeys(a.addr, b.addr); c != 0 {
			return c
		}
		return int(int64(a.id) - int64(b.id))
	})
	return slices.CompactFunc(ms, func(a, b member) bool { return a.id == b.id && a.addr == b.addr })
}

// smallSet is the size up to which idSet scans a slice: cheaper than a
// map for the backends of most services.
const smallSet = 64

// idSet answers whether an id is among a few (a linear scan) or many (a
// map) ids.
type idSet struct {
	small []uint32
	many  map[uint32]struct{}
}

// newIDSet returns the set of id(e) for e in es.
func newIDSet[E any](es []E, id func(E) uint32) idSet {
	var s idSet
	if len(es) > smallSet {
		s.many = make(map[uint32]struct{}, len(es))
		for _, e := range es {
			s.many[id(e)] = struct{}{}
		}
		return s
	}
	s.small = make([]uint32, 0, len(es))
	for _, e := range es {
		s.small = append(s.small, id(e))
	}
	return s
}

func (s idSet) has(id uint32) bool {
	if s.many != nil {
		_, ok := s.many[id]
		return ok
	}
	return slices.Contains(s.small, id)
}
