package lbmap

import (
	"net/netip"

	"github.com/apiary-net/apiary/datapath"
)

// Service is a frontend as the maps hold it, for `apiary bpf lb list`.
type Service struct {
	Frontend datapath.L3n4Addr
	// Master is false for slots left without a master entry.
	Master          bool
	RevNATIndex     uint16
	Flags           uint8
	AffinityTimeout uint32 // seconds
	Count           uint16
	Slots           []Slot
	// SourceRanges are the clients from outside it admits (flag
	// FlagSourceRange).
	SourceRanges []netip.Prefix
}

// Slot is one backend slot of a frontend.
type Slot struct {
	Slot      uint16
	BackendID uint32
	// Backend is the zero value when the backend entry is missing.
	Backend   datapath.L3n4Addr
	State     datapath.BackendState
	ClusterID uint32
}

// Dump returns every frontend with its slots, sorted by frontend.
func (m *Maps) Dump() ([]Service, error) {
	raw, err := m.readServices()
	if err != nil {
		return nil, err
	}
	backends := map[uint32]backendEntry{}
	if err := m.readBackends(func(id uint32, e backendEntry) { backends[id] = e }); err != nil {
		return nil, err
	}
	ranges, err := m.SourceRanges()
	if err != nil {
		return nil, err
	}
	out := make([]Service, 0, len(raw))
	for _, rs := range raw {
		s := Service{
			Frontend: rs.frontend, Master: rs.written, RevNATIndex: rs.master.RevNATIndex,
			Flags: rs.master.Flags, AffinityTimeout: rs.master.AffinityTimeout, Count: rs.master.Count,
		}
		if rs.written {
			s.SourceRanges = ranges[rs.master.RevNATIndex]
		}
		for slot := uint16(1); slot <= rs.maxSlot; slot++ {
			id, ok := rs.slots[slot]
			if !ok {
				continue
			}
			b := backends[id]
			s.Slots = append(s.Slots, Slot{Slot: slot, BackendID: id, Backend: b.addr.l3n4(), State: b.state, ClusterID: b.clusterID})
		}
		out = append(out, s)
	}
	return out, nil
}

// CountBackends returns the number of backend entries of both families.
func (m *Maps) CountBackends() (int, error) {
	n := 0
	err := m.readBackends(func(uint32, backendEntry) { n++ })
	return n, err
}

// AffinityMatches returns the affinity match entries: the backend ids of
// each rev-NAT index.
func (m *Maps) AffinityMatches() (map[uint16][]uint32, error) {
	out := map[uint16][]uint32{}
	var (
		k   AffinityMatchKey
		one uint8
	)
	it := m.match.Iterate()
	for it.Next(&k, &one) {
		out[k.RevNATIndex] = append(out[k.RevNATIndex], k.BackendID)
	}
	return out, it.Err()
}

// RevNATFrontend returns the frontend rev-NAT index idx rewrites
// replies to, from the IPv4 map (v4) or the IPv6 one; false when the map
// has no such entry.
func (m *Maps) RevNATFrontend(idx uint16, v4 bool) (netip.AddrPort, bool) {
	if v4 {
		var v RevNAT4Value
		if err := m.rev4.Lookup(&idx, &v); err != nil {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(netip.AddrFrom4(v.Address), netPort(v.Port)), true
	}
	var v RevNAT6Value
	if err := m.rev6.Lookup(&idx, &v); err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(netip.AddrFrom16(v.Address), netPort(v.Port)), true
}
