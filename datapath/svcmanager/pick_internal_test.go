package svcmanager

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/datapath"
)

// TestPickLocalAgrees checks the one-pass path of selectBackends against
// the two-pass one on random backend lists: families, protocols, port
// names (shared lists, as the Converter makes them, and lists of their
// own), node names, every condition, unsorted and repeated backends,
// with and without the Local policy and the arena.
func TestPickLocalAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shared := [][]string{{"http"}, {"dns"}, {"http", "web"}}
	for step := range 3000 {
		svc := &Service{}
		for range r.IntN(14) {
			be := Backend{NodeName: []string{"", "node1", "node2"}[r.IntN(3)], Condition: Condition(r.IntN(3))}
			a := netip.AddrFrom4([4]byte{10, 0, byte(r.IntN(2)), byte(1 + r.IntN(6))})
			if r.IntN(5) == 0 {
				a = netip.AddrFrom16([16]byte{0xfd, 15: byte(1 + r.IntN(6))})
			}
			be.Addr = datapath.L3n4Addr{Addr: a, Port: uint16(8080 + r.IntN(2)), Proto: []uint8{datapath.ProtoTCP, datapath.ProtoUDP}[r.IntN(2)]}
			switch r.IntN(4) {
			case 0:
			case 1:
				be.PortNames = []string{[]string{"http", "dns", "web"}[r.IntN(3)]}
			default:
				be.PortNames = shared[r.IntN(len(shared))]
			}
			svc.Backends = append(svc.Backends, be)
		}
		fe := Frontend{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.1"), Port: 80, Proto: datapath.ProtoTCP},
			PortName: []string{"", "http", "web", "dns"}[r.IntN(4)]}
		if r.IntN(5) == 0 {
			fe.Addr.Addr = netip.MustParseAddr("fd00::1")
		}
		if r.IntN(3) == 0 {
			fe.Addr.Proto = datapath.ProtoUDP
		}
		local := r.IntN(2) == 0
		node := Node{Name: "node1"}
		for _, withArena := range []bool{false, true} {
			var arenaA, arenaB []datapath.LBBackend
			var pa, pb *[]datapath.LBBackend
			if withArena {
				arenaA = make([]datapath.LBBackend, 3, 3+r.IntN(20)) // lists of earlier frontends stay
				arenaB = slices.Clone(arenaA)
				pa, pb = &arenaA, &arenaB
			}
			p, q := newPicker(fe, node, local), newPicker(fe, node, local)
			one := p.pickLocal(svc.Backends, pa)
			two := q.pickTwoPass(svc, nil, false, pb)
			if !slices.Equal(one, two) {
				t.Fatalf("step %d (local %v, arena %v): frontend %s %q\nbackends %v\none pass %v\ntwo passes %v",
					step, local, withArena, fe.Addr, fe.PortName, svc.Backends, one, two)
			}
			if withArena && (len(arenaA) != 3+len(one) || len(arenaB) != 3+len(two)) {
				t.Fatalf("step %d: arenas hold %d and %d, want %d", step, len(arenaA), len(arenaB), 3+len(one))
			}
		}
	}
}
