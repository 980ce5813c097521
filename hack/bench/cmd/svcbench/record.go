package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/hack/bench"
)

// op is one raw map write of a change: an update (del false) or delete
// of a services entry (svc) or a backends entry, or (pair) one batch
// update of two services entries, a slot and then the master entry, as
// the writer makes it.
type op struct {
	svc, del, pair bool
	sk             lbmap.Service4Key
	sv             lbmap.ServiceValue
	keys           []lbmap.Service4Key // pair: slot, master
	vals           []lbmap.ServiceValue
	bk             uint32
	bv             lbmap.Backend4Value
}

// record runs an initial sync and the changes through a manager, untimed,
// and returns what its maps hold after the sync and the raw writes each
// change made, read back from the maps: for an added backend the new
// backend, its slot and the master entry; for a removed one the master
// entry, the slot (deleted) and the backend (deleted). It checks that
// the maps hold every change.
func record(dir string, in []input, b, changes int, size uint32) (bench.LBEntries4, [][]op, error) {
	s, err := newSide(dir, size)
	if err != nil {
		return bench.LBEntries4{}, nil, err
	}
	defer s.close()
	if err := s.sync(in); err != nil {
		return bench.LBEntries4{}, nil, err
	}
	var e bench.LBEntries4
	if e.SvcKeys, e.SvcVals, err = dump[lbmap.Service4Key, lbmap.ServiceValue](s.maps[lbmap.Services4Name]); err != nil {
		return bench.LBEntries4{}, nil, err
	}
	if e.BeKeys, e.BeVals, err = dump[uint32, lbmap.Backend4Value](s.maps[lbmap.Backends4Name]); err != nil {
		return bench.LBEntries4{}, nil, err
	}
	if e.RevKeys, e.RevVals, err = dump[uint16, lbmap.RevNAT4Value](s.maps[lbmap.RevNAT4Name]); err != nil {
		return bench.LBEntries4{}, nil, err
	}
	if want := len(in) * (b + 1); len(e.SvcKeys) != want || len(e.BeKeys) != len(in)*b || len(e.RevKeys) != len(in) {
		return bench.LBEntries4{}, nil, fmt.Errorf("after the initial sync the maps hold %d service entries (want %d), %d backends (want %d), %d rev-NAT entries (want %d)",
			len(e.SvcKeys), want, len(e.BeKeys), len(in)*b, len(e.RevKeys), len(in))
	}
	ops := make([][]op, 0, changes)
	for j := range changes {
		i := target(j, len(in))
		if err := s.change(in, j); err != nil {
			return bench.LBEntries4{}, nil, err
		}
		fe := clusterIP(i).As4()
		master := lbmap.Service4Key{Address: fe, Dport: port(80), Proto: 6}
		slot := master
		slot.BackendSlot = uint16(b + 1)
		var mv, sv lbmap.ServiceValue
		if err := s.maps[lbmap.Services4Name].Lookup(&master, &mv); err != nil {
			return bench.LBEntries4{}, nil, fmt.Errorf("change %d: service %d: %w", j, i, err)
		}
		if j%2 == 0 { // added
			var bv lbmap.Backend4Value
			if err := s.maps[lbmap.Services4Name].Lookup(&slot, &sv); err != nil {
				return bench.LBEntries4{}, nil, fmt.Errorf("change %d: service %d: slot %d: %w", j, i, b+1, err)
			}
			if err := s.maps[lbmap.Backends4Name].Lookup(&sv.BackendID, &bv); err != nil {
				return bench.LBEntries4{}, nil, fmt.Errorf("change %d: backend %d: %w", j, sv.BackendID, err)
			}
			if int(mv.Count) != b+1 || bv.Address != backendIP(i, b).As4() {
				return bench.LBEntries4{}, nil, fmt.Errorf("change %d: service %d holds %d backends, slot %d %v; want %d and %v", j, i, mv.Count, b+1, bv.Address, b+1, backendIP(i, b))
			}
			ops = append(ops, []op{{bk: sv.BackendID, bv: bv},
				{svc: true, pair: true, keys: []lbmap.Service4Key{slot, master}, vals: []lbmap.ServiceValue{sv, mv}}})
			continue
		}
		added := ops[len(ops)-1][0].bk
		if int(mv.Count) != b {
			return bench.LBEntries4{}, nil, fmt.Errorf("change %d: service %d holds %d backends, want %d", j, i, mv.Count, b)
		}
		if err := s.maps[lbmap.Services4Name].Lookup(&slot, &sv); !errors.Is(err, ebpf.ErrKeyNotExist) {
			return bench.LBEntries4{}, nil, fmt.Errorf("change %d: service %d: slot %d still there (%v)", j, i, b+1, err)
		}
		ops = append(ops, []op{{svc: true, sk: master, sv: mv}, {svc: true, del: true, sk: slot}, {del: true, bk: added}})
	}
	return e, ops, nil
}

// target is the service the j-th change touches: added (j even), then
// removed (j odd), services spread through all n.
func target(j, n int) int { return (j / 2 * 7919) % n }

// dump reads every entry of m.
func dump[K, V any](m *ebpf.Map) ([]K, []V, error) {
	var (
		ks []K
		vs []V
		k  K
		v  V
	)
	it := m.Iterate()
	for it.Next(&k, &v) {
		ks, vs = append(ks, k), append(vs, v)
	}
	if err := it.Err(); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", filepath.Base(m.String()), err)
	}
	return ks, vs, nil
}

// port returns p as the maps hold it (network byte order).
func port(p uint16) uint16 { return p>>8 | p<<8 }
