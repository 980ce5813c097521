package lbmap

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"unsafe"

	"github.com/apiary-net/apiary/datapath"
)

// TestAddrKeyOrder checks that address keys read back as their address,
// are equal exactly when their addresses are and sort as the addresses
// do: a frontend's members (by
// key) merge against a service's backends (sorted by address).
func TestAddrKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	addr := func() datapath.L3n4Addr {
		// Few distinct values, so that equal and near addresses are common.
		var a netip.Addr
		if rng.IntN(2) == 0 {
			a = netip.AddrFrom4([4]byte{10, 0, byte(rng.IntN(3)), byte(rng.IntN(3))})
		} else {
			var b [16]byte
			b[0], b[14], b[15] = 0xfd, byte(rng.IntN(3)), byte(rng.IntN(3))
			a = netip.AddrFrom16(b)
		}
		return datapath.L3n4Addr{Addr: a, Port: uint16(rng.IntN(3)) << 7, Proto: []uint8{datapath.ProtoTCP, datapath.ProtoUDP}[rng.IntN(2)]}
	}
	sign := func(c int) int { return min(max(c, -1), 1) }
	for range 20000 {
		a, b := addr(), addr()
		ka, kb := keyOf(a), keyOf(b)
		if ka.l3n4() != a || ka.String() != a.String() {
			t.Fatalf("key of %s reads back as %s", a, ka.l3n4())
		}
		if (ka == kb) != (a == b) {
			t.Fatalf("%s and %s: keys equal %v, addresses equal %v", a, b, ka == kb, a == b)
		}
		if got, want := sign(compareKeys(ka, kb)), sign(compareL3n4(a, b)); got != want {
			t.Fatalf("%s vs %s: keys compare %d, addresses %d", a, b, got, want)
		}
		if keyLess(&ka, &kb) != (compareL3n4(a, b) < 0) {
			t.Fatalf("%s vs %s: keyLess %v, addresses compare %d", a, b, keyLess(&ka, &kb), compareL3n4(a, b))
		}
	}
}

// TestAddrIndex: the index by address finds each record under its
// address only (IPv4 keys packed into a word must not collide), and
// deleting a record leaves another one at the same address.
func TestAddrIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var x addrIndex[*backend]
	x.reset(0)
	want := map[addrKey]*backend{}
	for i := range 50000 {
		var a netip.Addr
		if rng.IntN(4) > 0 {
			a = netip.AddrFrom4([4]byte{byte(rng.IntN(2)) * 255, 0, byte(rng.IntN(4)), byte(rng.IntN(4))})
		} else {
			a = netip.AddrFrom16([16]byte{0xfd, 15: byte(rng.IntN(4))})
		}
		k := keyOf(datapath.L3n4Addr{Addr: a, Port: uint16(rng.IntN(3)) * 257, Proto: uint8(rng.IntN(3)) * 6})
		switch be := want[k]; {
		case be != nil && rng.IntN(2) == 0:
			x.del(&k, be)
			delete(want, k)
		case be != nil:
			x.del(&k, &backend{}) // not its record: stays
		default:
			be = &backend{id: uint32(i)}
			x.set(&k, be)
			want[k] = be
		}
		if got := x.get(&k); got != want[k] {
			t.Fatalf("step %d: %s: record %p, want %p", i, k, got, want[k])
		}
	}
	if n := len(x.v4) + len(x.v6); n != len(want) {
		t.Fatalf("%d records in the index, want %d", n, len(want))
	}
	for k, be := range want {
		if got := x.get(&k); got != be {
			t.Fatalf("%s: record %p, want %p", k, got, be)
		}
	}
}

// TestParseDropsZone checks that a zoned backend address is the map's
// address (which has no zone): listed with and without the zone it is a
// duplicate.
func TestParseDropsZone(t *testing.T) {
	fe := datapath.L3n4Addr{Addr: netip.MustParseAddr("fd00::1"), Port: 80, Proto: datapath.ProtoTCP}
	be := datapath.L3n4Addr{Addr: netip.MustParseAddr("fe80::1"), Port: 8080, Proto: datapath.ProtoTCP}
	zoned := be
	zoned.Addr = zoned.Addr.WithZone("eth0")
	var d desired
	err := d.parse(datapath.LBService{Frontend: fe, Backends: []datapath.LBBackend{{Addr: zoned}, {Addr: be}}})
	if err == nil {
		t.Fatal("a backend listed with and without a zone was accepted")
	}
	if err := d.parse(datapath.LBService{Frontend: fe, Backends: []datapath.LBBackend{{Addr: zoned}}}); err != nil {
		t.Fatal(err)
	}
	if d.backends[0].key != keyOf(be) {
		t.Fatalf("backend parsed as %s, want %s", d.backends[0].key, be)
	}
}

// TestRecordSizes: the records an initial sync makes 100,000 of keep
// their size (a field added in the wrong place pads them).
func TestRecordSizes(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want uintptr
	}{
		{"backend", unsafe.Sizeof(backend{}), 64},
		{"member", unsafe.Sizeof(member{}), 32},
		{"addrKey", unsafe.Sizeof(addrKey{}), 20},
	} {
		if tt.got != tt.want {
			t.Errorf("%s is %d bytes, want %d", tt.name, tt.got, tt.want)
		}
	}
}
