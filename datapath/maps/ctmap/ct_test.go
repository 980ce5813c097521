package ctmap_test

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net/netip"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/policy"
)

func TestLayoutMatchesPrograms(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b any
	}{
		{"Key4", ctmap.Key4{}, bpf.LxcCt4Key{}},
		{"Key6", ctmap.Key6{}, bpf.LxcCt6Key{}},
		{"Value", ctmap.Value{}, bpf.LxcCtValue{}},
	} {
		if a, b := binary.Size(c.a), binary.Size(c.b); a != b {
			t.Errorf("%s is %d bytes, the C struct %d", c.name, a, b)
		}
	}
}

func TestGC(t *testing.T) {
	m, err := ctmap.Open(slog.New(slog.NewTextHandler(io.Discard, nil)), bpfmaptest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ct4, ct6 := m.EBPF()
	const now = 1_000_000_000_000
	put4 := func(src, dst string, dir policy.Direction, expires uint64) {
		k := ctmap.Key4{Saddr: netip.MustParseAddr(src).As4(), Daddr: netip.MustParseAddr(dst).As4(),
			Sport: ctmap.NetworkPort(40000), Dport: ctmap.NetworkPort(80), Proto: 6, Direction: uint8(dir)}
		if err := ct4.Update(&k, &ctmap.Value{Expires: expires, EndpointID: 1}, ebpf.UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	put4("10.0.0.7", "10.0.1.1", policy.Egress, now+1)  // live, restored endpoint
	put4("10.0.0.7", "10.0.1.2", policy.Egress, now-1)  // expired
	put4("10.0.1.1", "10.0.0.8", policy.Ingress, now+1) // live, endpoint 10.0.0.8 not restored
	put4("10.0.0.8", "10.0.1.1", policy.Egress, now+1)  // live, endpoint 10.0.0.8 not restored
	k6 := ctmap.Key6{Saddr: netip.MustParseAddr("fd00::7").As16(), Daddr: netip.MustParseAddr("fd00::1").As16(), Proto: 17, Direction: 1}
	if err := ct6.Update(&k6, &ctmap.Value{Expires: now}, ebpf.UpdateAny); err != nil { // expires exactly now
		t.Fatal(err)
	}
	restored := map[netip.Addr]bool{netip.MustParseAddr("10.0.0.7"): true, netip.MustParseAddr("fd00::7"): true}
	st, err := m.GC(now, ctmap.GCFilter{Keep: func(e ctmap.Entry) bool { return restored[e.Tuple.EndpointAddr()] }})
	if err != nil {
		t.Fatal(err)
	}
	if want := (ctmap.GCStats{Alive: 1, Expired: 2, Orphaned: 2}); st != want {
		t.Errorf("GC = %+v, want %+v", st, want)
	}
	left, err := m.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Tuple.Dst != netip.MustParseAddrPort("10.0.1.1:80") {
		t.Errorf("entries after GC = %+v, want only 10.0.0.7 -> 10.0.1.1:80", left)
	}
	// A second run without a filter finds nothing more to do.
	if st, err := m.GC(now, ctmap.GCFilter{}); err != nil || st != (ctmap.GCStats{Alive: 1}) {
		t.Errorf("second GC = %+v, %v; want 1 alive", st, err)
	}
	// Flushing endpoint 1's entries.
	st, err = m.GC(now, ctmap.GCFilter{Keep: func(e ctmap.Entry) bool { return e.Value.EndpointID != 1 }})
	if err != nil || st != (ctmap.GCStats{Orphaned: 1}) {
		t.Errorf("flush of endpoint 1 = %+v, %v; want 1 deleted", st, err)
	}
}
