package lbmap

import (
	"fmt"
	"slices"

	"github.com/apiary-net/apiary/datapath"
)

// restore reads the maps into the writer's mirror: the services with
// their slots (whose backends become their members, as active ones; not
// synced, so that their first upsert references every backend),
// the backends, rev-NAT entries and affinity matches, and sets the id
// allocators past the ids in use.
func (w *Writer) restore() error {
	w.services.reset(0)
	w.backends = backendTable{}
	w.byAddr.reset(0)
	w.revNATs = map[uint16]bool{}
	w.matches = map[uint16]map[uint32]bool{}
	svcs, err := w.m.readServices()
	if err != nil {
		return err
	}
	if err := w.m.readBackends(func(id uint32, e backendEntry) {
		be := w.newBackend(id, e.addr)
		be.entry, be.written = e, true
		w.nextBackend = max(w.nextBackend, id+1)
		w.topBackend = max(w.topBackend, id)
	}); err != nil {
		return err
	}
	for _, rs := range svcs {
		s := newServiceEntry(rs.frontend, int(rs.maxSlot))
		s.written, s.master = rs.written, rs.master
		for slot := uint16(1); slot <= rs.maxSlot; slot++ {
			id := rs.slots[slot]
			s.slots = append(s.slots, id)
			if be := w.backends.get(id); be != nil && slot <= rs.master.Count {
				s.members = append(s.members, member{addr: be.entry.addr, clusterID: be.entry.clusterID, id: id})
				be.refs = be.refs.set(s.key, datapath.BackendActive)
			}
		}
		s.members = sortMembers(s.members)
		w.services.set(&s.key, s)
	}
	for _, v4 := range []bool{true, false} {
		var (
			idx uint16
			r4  RevNAT4Value
			r6  RevNAT6Value
		)
		it := w.m.revNAT(v4).Iterate()
		for v4 && it.Next(&idx, &r4) || !v4 && it.Next(&idx, &r6) {
			if v4 {
				w.revNATs[idx] = true
			} else {
				w.revNATs[idx] = false
			}
			w.nextRevNAT = max(w.nextRevNAT, idx+1)
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("read rev-NAT map: %w", err)
		}
	}
	if err := w.restoreRanges(); err != nil {
		return err
	}
	var (
		k   AffinityMatchKey
		one uint8
	)
	it := w.m.match.Iterate()
	for it.Next(&k, &one) {
		w.addMatch(k)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read affinity match map: %w", err)
	}
	return nil
}

// rawService is a frontend as read from a services map.
type rawService struct {
	frontend datapath.L3n4Addr
	written  bool // has a master entry
	master   ServiceValue
	slots    map[uint16]uint32
	maxSlot  uint16
}

// readServices reads both services maps, by frontend, sorted.
func (m *Maps) readServices() ([]*rawService, error) {
	byFE := map[datapath.L3n4Addr]*rawService{}
	add := func(fe datapath.L3n4Addr, slot uint16, v ServiceValue) {
		rs := byFE[fe]
		if rs == nil {
			rs = &rawService{frontend: fe, slots: map[uint16]uint32{}}
			byFE[fe] = rs
		}
		if slot == 0 {
			rs.written, rs.master = true, v
			return
		}
		rs.slots[slot] = v.BackendID
		rs.maxSlot = max(rs.maxSlot, slot)
	}
	var (
		k4 Service4Key
		k6 Service6Key
		v  ServiceValue
	)
	it := m.svc4.Iterate()
	for it.Next(&k4, &v) {
		add(k4.frontend(), k4.BackendSlot, v)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read lb4 services: %w", err)
	}
	it = m.svc6.Iterate()
	for it.Next(&k6, &v) {
		add(k6.frontend(), k6.BackendSlot, v)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read lb6 services: %w", err)
	}
	out := make([]*rawService, 0, len(byFE))
	for _, rs := range byFE {
		out = append(out, rs)
	}
	slices.SortFunc(out, func(a, b *rawService) int { return compareL3n4(a.frontend, b.frontend) })
	return out, nil
}

// readBackends calls fn for every backend of both maps.
func (m *Maps) readBackends(fn func(id uint32, e backendEntry)) error {
	var (
		id uint32
		b4 Backend4Value
		b6 Backend6Value
	)
	it := m.be4.Iterate()
	for it.Next(&id, &b4) {
		fn(id, b4.entry())
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read lb4 backends: %w", err)
	}
	it = m.be6.Iterate()
	for it.Next(&id, &b6) {
		fn(id, b6.entry())
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read lb6 backends: %w", err)
	}
	return nil
}

// compareL3n4 orders frontends: address, port, protocol, scope.
func compareL3n4(a, b datapath.L3n4Addr) int {
	if c := a.Addr.Compare(b.Addr); c != 0 {
		return c
	}
	if a.Port != b.Port {
		return int(a.Port) - int(b.Port)
	}
	if a.Proto != b.Proto {
		return int(a.Proto) - int(b.Proto)
	}
	return int(a.Scope) - int(b.Scope)
}
