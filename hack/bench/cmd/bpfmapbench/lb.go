package main

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/hack/bench"
)

// lbServices returns n ClusterIP services of b backends each; backends
// are shared by two services (as a pod behind two Services).
func lbServices(n, b int) []datapath.LBService {
	svcs := make([]datapath.LBService, 0, n)
	pool := max(n*b/2, b)
	for i := range n {
		s := datapath.LBService{
			Frontend: datapath.L3n4Addr{Addr: netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}), Port: 80, Proto: datapath.ProtoTCP},
			Type:     datapath.SVCTypeClusterIP,
		}
		for j := range b {
			k := (i*b + j) % pool
			s.Backends = append(s.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{
				Addr: netip.AddrFrom4([4]byte{10, 1, byte(k >> 8), byte(k)}), Port: 8080, Proto: datapath.ProtoTCP}})
		}
		svcs = append(svcs, s)
	}
	return svcs
}

// lbRound writes n services of b backends with ReconcileServices into
// empty pinned maps, and the same entries (backends once, rev-NAT
// entries, slots, master entries), precomputed, with raw batch updates
// into empty maps of the same specs; then times a one-backend change of
// one service with UpsertService against the two raw updates it needs (the
// new backend, its slot).
func lbRound(round int, dir string, n, b int) (ours, raw, oneOurs, oneRaw time.Duration, err error) {
	svcs := lbServices(n, b)
	lbDir := filepath.Join(dir, "lb")
	if err := os.Mkdir(lbDir, 0o700); err != nil {
		return 0, 0, 0, 0, err
	}
	// The maps sized as the loader sizes them with --bpf-lb-map-max.
	size := uint32(max(n*(b+1), 65536))
	for _, name := range lbmap.MapNames {
		spec, err := lbmap.Spec(name, size)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		m, err := bpfmap.OpenOrCreate(log, spec, filepath.Join(lbDir, name))
		if err != nil {
			return 0, 0, 0, 0, err
		}
		m.Close()
	}
	w, err := lbmap.OpenWriter(log, lbDir)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer w.Close()
	rawMaps := map[string]*ebpf.Map{}
	for _, name := range []string{lbmap.Services4Name, lbmap.Backends4Name, lbmap.RevNAT4Name} {
		spec, err := lbmap.Spec(name, size)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		m, err := ebpf.NewMap(spec)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		defer m.Close()
		rawMaps[name] = m
	}
	var e bench.LBEntries4
	backends := map[datapath.L3n4Addr]uint32{}
	for i, s := range svcs {
		rev := uint16(i + 1)
		fe := s.Frontend.Addr.As4()
		e.RevKeys, e.RevVals = append(e.RevKeys, rev), append(e.RevVals, lbmap.RevNAT4Value{Address: fe, Port: port(80)})
		for j, be := range s.Backends {
			id, ok := backends[be.Addr]
			if !ok {
				id = uint32(len(backends) + 1)
				backends[be.Addr] = id
				e.BeKeys = append(e.BeKeys, id)
				e.BeVals = append(e.BeVals, lbmap.Backend4Value{Address: be.Addr.Addr.As4(), Port: port(8080), Proto: 6})
			}
			e.SvcKeys = append(e.SvcKeys, lbmap.Service4Key{Address: fe, Dport: port(80), BackendSlot: uint16(j + 1), Proto: 6})
			e.SvcVals = append(e.SvcVals, lbmap.ServiceValue{BackendID: id, RevNATIndex: rev})
		}
		e.SvcKeys = append(e.SvcKeys, lbmap.Service4Key{Address: fe, Dport: port(80), Proto: 6})
		e.SvcVals = append(e.SvcVals, lbmap.ServiceValue{Count: uint16(len(s.Backends)), RevNATIndex: rev})
	}
	runOurs := func() error {
		start := time.Now()
		_, _, err := w.ReconcileServices(slices.Values(svcs))
		ours = time.Since(start)
		return err
	}
	runRaw := func() error {
		start := time.Now()
		err := e.Write(rawMaps[lbmap.Backends4Name], rawMaps[lbmap.RevNAT4Name], rawMaps[lbmap.Services4Name])
		raw = time.Since(start)
		return err
	}
	if err := bench.InOrder(round, runOurs, runRaw); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("write %d services: %w", n, err)
	}
	oneOurs, oneRaw, err = lbOneChange(w, rawMaps, svcs[0])
	return ours, raw, oneOurs, oneRaw, err
}

// lbOneChange replaces one backend of s, back and forth.
func lbOneChange(w *lbmap.Writer, raw map[string]*ebpf.Map, s datapath.LBService) (ours, rawD time.Duration, err error) {
	const changes = 2000
	alt := s
	alt.Backends = append([]datapath.LBBackend(nil), s.Backends...)
	alt.Backends[0].Addr.Addr = netip.MustParseAddr("10.2.0.1")
	start := time.Now()
	for i := range changes {
		v := s
		if i%2 == 0 {
			v = alt
		}
		if err := w.UpsertService(v); err != nil {
			return 0, 0, err
		}
	}
	ours = time.Since(start) / changes
	id := uint32(1 << 20)
	bv := lbmap.Backend4Value{Address: [4]byte{10, 2, 0, 1}, Port: port(8080), Proto: 6}
	sk := lbmap.Service4Key{Address: s.Frontend.Addr.As4(), Dport: port(80), BackendSlot: 1, Proto: 6}
	start = time.Now()
	for i := range changes {
		sv := lbmap.ServiceValue{BackendID: id + uint32(i), RevNATIndex: 1}
		if err := raw[lbmap.Backends4Name].Update(&sv.BackendID, &bv, ebpf.UpdateAny); err != nil {
			return 0, 0, err
		}
		if err := raw[lbmap.Services4Name].Update(&sk, &sv, ebpf.UpdateAny); err != nil {
			return 0, 0, err
		}
		if err := raw[lbmap.Backends4Name].Delete(&sv.BackendID); err != nil {
			return 0, 0, err
		}
	}
	rawD = time.Since(start) / changes
	return ours, rawD, nil
}

// port returns p as the maps hold it (network byte order).
func port(p uint16) uint16 { return p>>8 | p<<8 }
