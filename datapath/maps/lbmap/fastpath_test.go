package lbmap_test

import (
	"fmt"
	stdmaps "maps"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// backendStates returns the state of every IPv4 backend entry, by
// address:port.
func backendStates(t *testing.T, root string) map[string]datapath.BackendState {
	t.Helper()
	m, err := ebpf.LoadPinnedMap(filepath.Join(root, lbmap.Backends4Name), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out := map[string]datapath.BackendState{}
	var (
		id uint32
		v  lbmap.Backend4Value
	)
	it := m.Iterate()
	for it.Next(&id, &v) {
		a := netip.AddrPortFrom(netip.AddrFrom4(v.Address), netPortOf(v.Port)).String()
		if _, dup := out[a]; dup {
			t.Errorf("backend %s has two entries", a)
		}
		out[a] = datapath.BackendState(v.State)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkMaps checks that the maps hold exactly svcs (by frontend): a
// master entry whose count is the number of active backends, one slot
// per active backend and no other, the backend entries of every
// frontend once, each with the most active state a frontend gives it,
// and the affinity matches of the active backends of the frontends with
// affinity.
func checkMaps(t *testing.T, step string, root string, m *lbmap.Maps, svcs map[string]datapath.LBService) {
	t.Helper()
	got := dump(t, m)
	wantStates := map[string]datapath.BackendState{}
	wantMatches := map[uint16][]uint32{}
	for fe, s := range svcs {
		key := fe + "/TCP"
		g, ok := got[key]
		if !ok || !g.Master {
			t.Fatalf("%s: no master entry for %s (maps: %v)", step, fe, slices.Collect(stdmaps.Keys(got)))
		}
		var active []string
		for _, b := range s.Backends {
			a := netip.AddrPortFrom(b.Addr.Addr, b.Addr.Port).String()
			if st, seen := wantStates[a]; !seen || b.State < st {
				wantStates[a] = b.State
			}
			if b.State == datapath.BackendActive {
				active = append(active, a)
			}
		}
		slots := slotAddrs(g)
		slices.Sort(active)
		slices.Sort(slots)
		if int(g.Count) != len(active) || !slices.Equal(slots, active) {
			t.Fatalf("%s: %s has count %d, slots %v; want the active backends %v", step, fe, g.Count, slotAddrs(g), active)
		}
		if s.SessionAffinityTimeout > 0 {
			for _, sl := range g.Slots {
				wantMatches[g.RevNATIndex] = append(wantMatches[g.RevNATIndex], sl.BackendID)
			}
		}
	}
	if len(got) != len(svcs) {
		t.Fatalf("%s: maps hold %d frontends, want %d", step, len(got), len(svcs))
	}
	if gotStates := backendStates(t, root); !stdmaps.Equal(gotStates, wantStates) {
		t.Fatalf("%s: backend entries %v, want %v", step, gotStates, wantStates)
	}
	gotMatches, err := m.AffinityMatches()
	if err != nil {
		t.Fatal(err)
	}
	for _, ids := range gotMatches {
		slices.Sort(ids)
	}
	for _, ids := range wantMatches {
		slices.Sort(ids)
	}
	if !stdmaps.EqualFunc(gotMatches, wantMatches, slices.Equal) {
		t.Fatalf("%s: affinity matches %v, want %v", step, gotMatches, wantMatches)
	}
}

// TestUpsertsKeepMapsRight upserts and deletes random services (a few
// frontends sharing a few backends, in random orders and states, with
// affinity turned on and off, restarts followed by a reconcile) and
// checks after every step that the maps hold exactly what was asked:
// the writer's fast path (only what changed) must leave the maps as a
// full rewrite would.
func TestUpsertsKeepMapsRight(t *testing.T) {
	root := bpfmaptest.Root(t)
	w, m := open(t, root)
	rnd := rand.New(rand.NewPCG(24, 1))
	frontends := []string{"10.96.0.1:80", "10.96.0.2:80", "10.96.0.3:80", "10.96.0.4:80"}
	pool := []string{"10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80", "10.0.1.4:80", "10.0.1.5:80", "10.0.1.6:80", "10.0.1.7:80", "10.0.1.8:80"}
	held := map[string]datapath.LBService{}
	for step := range 400 {
		fe := frontends[rnd.IntN(len(frontends))]
		var name string
		switch r := rnd.IntN(100); {
		case r < 8:
			name = "delete " + fe
			if err := w.DeleteService(l3n4(fe, datapath.ProtoTCP)); err != nil {
				t.Fatalf("step %d: %s: %v", step, name, err)
			}
			delete(held, fe)
		case r < 11:
			name = "restart and reconcile"
			w.Close()
			w, _ = open(t, root)
			if _, _, err := w.ReconcileServices(slices.Values(slices.Collect(stdmaps.Values(held)))); err != nil {
				t.Fatalf("step %d: %s: %v", step, name, err)
			}
		default:
			s := held[fe]
			if s.Frontend.Port == 0 || r < 30 {
				s = randomService(rnd, fe, pool)
			} else {
				s = changeOne(rnd, s, pool)
			}
			name = fmt.Sprintf("upsert %s %s", fe, describe(s))
			if err := w.UpsertService(s); err != nil {
				t.Fatalf("step %d: %s: %v", step, name, err)
			}
			held[fe] = s
		}
		checkMaps(t, fmt.Sprintf("step %d (%s)", step, name), root, m, held)
	}
}

// randomService returns frontend fe with a random subset of pool, in a
// random order and random states, with affinity one time in three.
func randomService(rnd *rand.Rand, fe string, pool []string) datapath.LBService {
	s := svc(fe)
	for _, i := range rnd.Perm(len(pool))[:rnd.IntN(len(pool)+1)] {
		s.Backends = append(s.Backends, datapath.LBBackend{Addr: l3n4(pool[i], datapath.ProtoTCP), State: randomState(rnd)})
	}
	if rnd.IntN(3) == 0 {
		s.SessionAffinityTimeout = time.Minute
	}
	return s
}

// randomState is active six times in ten, else terminating or
// quarantined.
func randomState(rnd *rand.Rand) datapath.BackendState {
	switch r := rnd.IntN(10); {
	case r < 6:
		return datapath.BackendActive
	case r < 8:
		return datapath.BackendTerminating
	default:
		return datapath.BackendQuarantined
	}
}

// changeOne returns s with one change, as an EndpointSlice update makes:
// a backend added, removed, or its state changed; the list sometimes
// shuffled.
func changeOne(rnd *rand.Rand, s datapath.LBService, pool []string) datapath.LBService {
	bs := slices.Clone(s.Backends)
	switch r := rnd.IntN(3); {
	case r == 0 && len(bs) < len(pool):
		for {
			a := l3n4(pool[rnd.IntN(len(pool))], datapath.ProtoTCP)
			if !slices.ContainsFunc(bs, func(b datapath.LBBackend) bool { return b.Addr == a }) {
				bs = slices.Insert(bs, rnd.IntN(len(bs)+1), datapath.LBBackend{Addr: a})
				break
			}
		}
	case r == 1 && len(bs) > 0:
		i := rnd.IntN(len(bs))
		bs = slices.Delete(bs, i, i+1)
	case len(bs) > 0:
		bs[rnd.IntN(len(bs))].State = randomState(rnd)
	}
	if rnd.IntN(4) == 0 {
		rnd.Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
	}
	s.Backends = bs
	return s
}

func describe(s datapath.LBService) string {
	var parts []string
	for _, b := range s.Backends {
		parts = append(parts, fmt.Sprintf("%s:%d", b.Addr.Addr, b.State))
	}
	return fmt.Sprintf("affinity=%v [%s]", s.SessionAffinityTimeout > 0, strings.Join(parts, " "))
}

// TestSharedBackendStateInOneFrontend: a backend two frontends share,
// next to backends only one of them has, changes state in one frontend
// only: its entry holds the most active state, whichever frontend's
// upsert changed it, and the other frontend's unchanged upserts leave it.
func TestSharedBackendStateInOneFrontend(t *testing.T) {
	root := bpfmaptest.Root(t)
	w, m := open(t, root)
	const x = "10.0.1.9:80"
	a := func(state string, extra ...string) datapath.LBService {
		return svc("10.96.0.1:80", append([]string{"10.0.1.1:80", "10.0.1.2:80", state + x}, extra...)...)
	}
	b := func(state string, extra ...string) datapath.LBService {
		return svc("10.96.0.2:80", append([]string{"10.0.2.1:80", state + x}, extra...)...)
	}
	steps := []struct {
		name string
		give datapath.LBService
		want datapath.BackendState
	}{
		{"a active", a(""), datapath.BackendActive},
		{"b active", b(""), datapath.BackendActive},
		{"a terminating", a("~"), datapath.BackendActive},
		{"b grows, x unchanged", b("", "10.0.2.2:80"), datapath.BackendActive},
		{"b terminating", b("~", "10.0.2.2:80"), datapath.BackendTerminating},
		{"a grows, x unchanged", a("~", "10.0.1.3:80"), datapath.BackendTerminating},
		{"a active again", a("", "10.0.1.3:80"), datapath.BackendActive},
		{"a terminating again", a("~", "10.0.1.3:80"), datapath.BackendTerminating},
		{"b active, shrinks", b(""), datapath.BackendActive},
	}
	held := map[string]datapath.LBService{}
	for _, s := range steps {
		if err := w.UpsertService(s.give); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		held[s.give.Frontend.Addr.String()+":80"] = s.give
		if st := backendState(t, root, x); st != s.want {
			t.Errorf("%s: shared backend's state %d, want %d", s.name, st, s.want)
		}
		checkMaps(t, s.name, root, m, held)
	}
}

// TestReorderChangesNothing: the same backends in another order keep
// their ids and slots; a new backend in an unsorted list takes the next
// slot.
func TestReorderChangesNothing(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	const fe = "10.96.0.10:80/TCP"
	if err := w.UpsertService(svc("10.96.0.10:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80")); err != nil {
		t.Fatal(err)
	}
	before := dump(t, m)[fe]
	if err := w.UpsertService(svc("10.96.0.10:80", "10.0.1.3:80", "10.0.1.1:80", "10.0.1.2:80")); err != nil {
		t.Fatal(err)
	}
	after := dump(t, m)[fe]
	if !slices.Equal(slotAddrs(after), slotAddrs(before)) || !maps(backendIDs(after), backendIDs(before)) {
		t.Errorf("after a reorder: slots %v ids %v, were %v %v", slotAddrs(after), backendIDs(after), slotAddrs(before), backendIDs(before))
	}
	if err := w.UpsertService(svc("10.96.0.10:80", "10.0.1.3:80", "10.0.1.4:80", "10.0.1.1:80", "10.0.1.2:80")); err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80", "10.0.1.4:80"}
	if got := dump(t, m)[fe]; got.Count != 4 || !slices.Equal(slotAddrs(got), want) {
		t.Errorf("after adding to a shuffled list: count %d slots %v, want 4 %v", got.Count, slotAddrs(got), want)
	}
}

// TestAddAndRemoveInOneUpsert: backends that leave, join and change
// state in one upsert: the joining ones take the freed slots in the
// service's order, the gone one is deleted, the terminating one keeps
// its entry.
func TestAddAndRemoveInOneUpsert(t *testing.T) {
	root := bpfmaptest.Root(t)
	w, m := open(t, root)
	const fe = "10.96.0.10:80/TCP"
	first := svc("10.96.0.10:80", "10.0.1.1:80", "10.0.1.2:80", "~10.0.1.3:80", "10.0.1.5:80")
	if err := w.UpsertService(first); err != nil {
		t.Fatal(err)
	}
	if got := slotAddrs(dump(t, m)[fe]); !slices.Equal(got, []string{"10.0.1.1:80", "10.0.1.2:80", "10.0.1.5:80"}) {
		t.Fatalf("slots %v", got)
	}
	// .1 turns terminating, .2 goes, .4 comes, .3 turns active.
	second := svc("10.96.0.10:80", "~10.0.1.1:80", "10.0.1.4:80", "10.0.1.3:80", "10.0.1.5:80")
	if err := w.UpsertService(second); err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.1.4:80", "10.0.1.3:80", "10.0.1.5:80"}
	if got := dump(t, m)[fe]; got.Count != 3 || !slices.Equal(slotAddrs(got), want) {
		t.Errorf("count %d slots %v, want 3 %v", got.Count, slotAddrs(got), want)
	}
	checkMaps(t, "second", root, m, map[string]datapath.LBService{"10.96.0.10:80": second})
}

// TestDuplicateNamedInAnyOrder: a backend listed twice in an unsorted
// list is refused, naming its second listing, and nothing is written.
func TestDuplicateNamedInAnyOrder(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	s := svc("10.96.0.10:80", "10.0.1.3:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.1:80", "10.0.1.3:80")
	err := w.UpsertService(s)
	if err == nil || !strings.Contains(err.Error(), "backends[3]: 10.0.1.1:80/TCP is listed twice") {
		t.Fatalf("UpsertService = %v, want backends[3] named as listed twice", err)
	}
	if d := dump(t, m); len(d) != 0 {
		t.Errorf("maps hold %v after refused input", d)
	}
}
