package lbmap_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// BenchmarkReconcileFromEmpty writes 5000 services of 10 backends (each
// backend shared by two services) into empty maps.
func BenchmarkReconcileFromEmpty(b *testing.B) {
	var svcs []datapath.LBService
	for i := range 5000 {
		var backends []string
		for j := range 10 {
			k := (i*10 + j) % 25000
			backends = append(backends, fmt.Sprintf("10.1.%d.%d:8080", k>>8, k&0xff))
		}
		svcs = append(svcs, svc(fmt.Sprintf("10.96.%d.%d:80", i>>8, i&0xff), backends...))
	}
	for b.Loop() {
		b.StopTimer()
		w, _ := open(b, bpfmaptest.Root(b))
		b.StartTimer()
		if _, _, err := w.ReconcileServices(slices.Values(svcs)); err != nil {
			b.Fatal(err)
		}
	}
}

const (
	oneServices = 10000
	oneBackends = 10
)

// oneBackendSetup returns a writer holding oneServices services of
// oneBackends backends each (100,000 backends, no two services share
// one), written with ReconcileServices into maps sized as
// --bpf-lb-map-max sizes them, and each service with an 11th backend
// (grown[i]) and without it (svcs[i]).
func oneBackendSetup(b *testing.B) (w *lbmap.Writer, root string, svcs, grown []datapath.LBService) {
	root = bpfmaptest.Root(b)
	w = sizedWriter(b, root)
	b.Cleanup(func() { w.Close() })
	addr := func(net byte, k int) netip.Addr {
		return netip.AddrFrom4([4]byte{net, byte(k >> 16), byte(k >> 8), byte(k)})
	}
	for i := range oneServices {
		s := datapath.LBService{
			Frontend: datapath.L3n4Addr{Addr: addr(172, i), Port: 80, Proto: datapath.ProtoTCP},
			Type:     datapath.SVCTypeClusterIP,
			Backends: make([]datapath.LBBackend, oneBackends, oneBackends+1),
		}
		for j := range oneBackends {
			s.Backends[j].Addr = datapath.L3n4Addr{Addr: addr(10, i*oneBackends+j), Port: 8080, Proto: datapath.ProtoTCP}
		}
		g := s
		g.Backends = append(s.Backends[:oneBackends:oneBackends], datapath.LBBackend{
			Addr: datapath.L3n4Addr{Addr: addr(11, i), Port: 8080, Proto: datapath.ProtoTCP}})
		svcs, grown = append(svcs, s), append(grown, g)
	}
	if _, _, err := w.ReconcileServices(slices.Values(svcs)); err != nil {
		b.Fatal(err)
	}
	return w, root, svcs, grown
}

// oneBackendIndex spreads the changes across all services: op i grows
// (even i) or shrinks back (odd i) service oneBackendIndex(i).
func oneBackendIndex(i int) int { return (i / 2 * 7919) % oneServices }

// BenchmarkUpsertOneBackend times a one-endpoint change with
// UpsertService in a writer holding 10,000 services of 10 backends: one
// service gets an 11th backend (its entry, its slot, the master's count)
// or loses it again (the master's count, the slot, the entry).
func BenchmarkUpsertOneBackend(b *testing.B) {
	w, _, svcs, grown := oneBackendSetup(b)
	i := 0
	for b.Loop() {
		k := oneBackendIndex(i)
		s := grown[k]
		if i%2 == 1 {
			s = svcs[k]
		}
		if err := w.UpsertService(s); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// oneChange is the three map writes of one service's 11th backend, read
// back from the maps after the writer made them.
type oneChange struct {
	id                 uint32
	backend            lbmap.Backend4Value
	slotKey, masterKey lbmap.Service4Key
	slot               lbmap.ServiceValue
	grown, shrunk      lbmap.ServiceValue
}

// BenchmarkRawOneBackend makes the writes BenchmarkUpsertOneBackend's
// changes make with plain ebpf.Map Update and Delete calls, on the same
// maps holding the same entries: growing, the backend, its slot, the
// master entry; shrinking, the master entry, the slot, the backend.
func BenchmarkRawOneBackend(b *testing.B) {
	w, root, svcs, grown := oneBackendSetup(b)
	svcMap, beMap := pinned(b, root, lbmap.Services4Name), pinned(b, root, lbmap.Backends4Name)
	changes := make([]oneChange, oneServices)
	for k := range changes {
		c := &changes[k]
		if err := w.UpsertService(grown[k]); err != nil {
			b.Fatal(err)
		}
		fe := grown[k].Frontend
		c.masterKey = lbmap.Service4Key{Address: fe.Addr.As4(), Dport: netPortOf(fe.Port), Proto: fe.Proto}
		lookup(b, svcMap, &c.masterKey, &c.grown)
		c.slotKey = c.masterKey
		c.slotKey.BackendSlot = c.grown.Count
		lookup(b, svcMap, &c.slotKey, &c.slot)
		c.id = c.slot.BackendID
		lookup(b, beMap, &c.id, &c.backend)
		if err := w.UpsertService(svcs[k]); err != nil {
			b.Fatal(err)
		}
		lookup(b, svcMap, &c.masterKey, &c.shrunk)
		if c.grown.Count != oneBackends+1 || c.shrunk.Count != oneBackends {
			b.Fatalf("service %d: counts %d and %d, want %d and %d", k, c.grown.Count, c.shrunk.Count, oneBackends+1, oneBackends)
		}
	}
	i := 0
	for b.Loop() {
		c := &changes[oneBackendIndex(i)]
		var err error
		if i%2 == 0 {
			err = beMap.Update(&c.id, &c.backend, ebpf.UpdateAny)
			if err == nil {
				err = svcMap.Update(&c.slotKey, &c.slot, ebpf.UpdateAny)
			}
			if err == nil {
				err = svcMap.Update(&c.masterKey, &c.grown, ebpf.UpdateAny)
			}
		} else {
			err = svcMap.Update(&c.masterKey, &c.shrunk, ebpf.UpdateAny)
			if err == nil {
				err = svcMap.Delete(&c.slotKey)
			}
			if err == nil {
				err = beMap.Delete(&c.id)
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func pinned(b *testing.B, root, name string) *ebpf.Map {
	m, err := ebpf.LoadPinnedMap(filepath.Join(root, name), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

func lookup(b *testing.B, m *ebpf.Map, k, v any) {
	if err := m.Lookup(k, v); err != nil {
		b.Fatalf("look %v up in %s: %v", k, m, err)
	}
}

// netPortOf is a port in network byte order, as the maps' keys hold it.
func netPortOf(p uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], p)
	return binary.NativeEndian.Uint16(b[:])
}

// sizedWriter pins the load-balancing maps under dir, sized for
// oneServices services of oneBackends backends as --bpf-lb-map-max
// sizes them, and opens a writer on them.
func sizedWriter(b *testing.B, dir string) *lbmap.Writer {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, name := range lbmap.MapNames {
		spec, err := lbmap.Spec(name, uint32(max(oneServices*(oneBackends+2), 65536)))
		if err != nil {
			b.Fatal(err)
		}
		m, err := bpfmap.OpenOrCreate(log, spec, filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
	w, err := lbmap.OpenWriter(log, dir)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// syncMaps pins the load-balancing maps, sized for oneServices services
// of oneBackends backends, under a new directory of root, and opens a
// writer on them; done closes it and unpins them.
func syncMaps(b *testing.B, root string, i int) (w *lbmap.Writer, done func()) {
	dir := filepath.Join(root, fmt.Sprint(i))
	if err := os.Mkdir(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	w = sizedWriter(b, dir)
	return w, func() {
		w.Close()
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReconcileSync times the initial sync of oneServices services
// of oneBackends backends (no two services share one) with
// ReconcileServices into empty maps.
func BenchmarkReconcileSync(b *testing.B) {
	_, root, svcs, _ := oneBackendSetup(b)
	i := 0
	for b.Loop() {
		b.StopTimer()
		w, done := syncMaps(b, root, i)
		b.StartTimer()
		if _, _, err := w.ReconcileServices(slices.Values(svcs)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		done()
		b.StartTimer()
		i++
	}
}

// BenchmarkRawSync writes what BenchmarkReconcileSync's sync writes (the
// backends, rev-NAT entries, slots and master entries, read back from a
// writer's maps) with three plain ebpf.Map.BatchUpdate calls into empty
// maps of the same specs.
func BenchmarkRawSync(b *testing.B) {
	_, root, _, _ := oneBackendSetup(b)
	var (
		svcKeys []lbmap.Service4Key
		svcVals []lbmap.ServiceValue
		beKeys  []uint32
		beVals  []lbmap.Backend4Value
		revKeys []uint16
		revVals []lbmap.RevNAT4Value
	)
	readAll(b, pinned(b, root, lbmap.Services4Name), &svcKeys, &svcVals)
	readAll(b, pinned(b, root, lbmap.Backends4Name), &beKeys, &beVals)
	readAll(b, pinned(b, root, lbmap.RevNAT4Name), &revKeys, &revVals)
	if len(svcKeys) != oneServices*(oneBackends+1) || len(beKeys) != oneServices*oneBackends || len(revKeys) != oneServices {
		b.Fatalf("read %d service, %d backend, %d rev-NAT entries", len(svcKeys), len(beKeys), len(revKeys))
	}
	size := uint32(max(oneServices*(oneBackends+2), 65536))
	for b.Loop() {
		b.StopTimer()
		var ms []*ebpf.Map
		for _, name := range []string{lbmap.Backends4Name, lbmap.RevNAT4Name, lbmap.Services4Name} {
			spec, err := lbmap.Spec(name, size)
			if err != nil {
				b.Fatal(err)
			}
			m, err := ebpf.NewMap(spec)
			if err != nil {
				b.Fatal(err)
			}
			ms = append(ms, m)
		}
		b.StartTimer()
		_, err := ms[0].BatchUpdate(beKeys, beVals, nil)
		if err == nil {
			_, err = ms[1].BatchUpdate(revKeys, revVals, nil)
		}
		if err == nil {
			_, err = ms[2].BatchUpdate(svcKeys, svcVals, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, m := range ms {
			m.Close()
		}
		b.StartTimer()
	}
}

// readAll appends every entry of m to keys and values.
func readAll[K, V any](b *testing.B, m *ebpf.Map, keys *[]K, values *[]V) {
	var (
		k K
		v V
	)
	it := m.Iterate()
	for it.Next(&k, &v) {
		*keys, *values = append(*keys, k), append(*values, v)
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
}
