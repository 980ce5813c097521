package lbmap_test

import (
	"slices"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// TestTwoScopes writes a frontend's external entry (flagged two-scopes,
// the node's backend) and its internal one (same address, scope
// internal, every backend): two frontends in the maps, each with its
// own rev-NAT index, slots and flags; a restart reads both back with
// their scopes, and deleting the internal one leaves the external one.
func TestTwoScopes(t *testing.T) {
	root := bpfmaptest.Root(t)
	w, m := open(t, root)
	ext := svc("192.0.2.100:80", "10.0.1.1:8080")
	ext.Type, ext.LocalOnly, ext.TwoScopes = datapath.SVCTypeLoadBalancer, true, true
	in := svc("192.0.2.100:80", "10.0.1.1:8080", "10.0.1.2:8080", "10.0.1.3:8080")
	in.Type, in.Frontend.Scope = datapath.SVCTypeLoadBalancer, datapath.ScopeInternal
	for _, s := range []datapath.LBService{ext, in} {
		if err := w.UpsertService(s); err != nil {
			t.Fatal(err)
		}
	}
	check := func(m *lbmap.Maps) {
		t.Helper()
		d := dump(t, m)
		e, i := d["192.0.2.100:80/TCP"], d["192.0.2.100:80/TCP/i"]
		if e.Flags&lbmap.FlagTwoScopes == 0 || e.Flags&lbmap.FlagLocal == 0 || len(e.Slots) != 1 {
			t.Errorf("external entry: flags %#x, %d slots; want two-scopes and Local, 1 slot", e.Flags, len(e.Slots))
		}
		if i.Flags&(lbmap.FlagTwoScopes|lbmap.FlagLocal) != 0 || len(i.Slots) != 3 || i.Frontend.Scope != datapath.ScopeInternal {
			t.Errorf("internal entry: %+v; want no two-scopes or Local flag, 3 slots, scope internal", i)
		}
		if e.RevNATIndex == i.RevNATIndex || e.RevNATIndex == 0 || i.RevNATIndex == 0 {
			t.Errorf("rev-NAT indexes %d and %d, want two", e.RevNATIndex, i.RevNATIndex)
		}
	}
	check(m)
	w.Close()
	w2, m2 := open(t, root)
	if added, removed, err := w2.ReconcileServices(slices.Values([]datapath.LBService{ext, in})); err != nil || added != 0 || removed != 0 {
		t.Fatalf("reconcile after the restart: %d added, %d removed, %v", added, removed, err)
	}
	check(m2)
	if err := w2.DeleteService(in.Frontend); err != nil {
		t.Fatal(err)
	}
	d := dump(t, m2)
	if _, ok := d["192.0.2.100:80/TCP/i"]; ok || len(d["192.0.2.100:80/TCP"].Slots) != 1 {
		t.Errorf("after deleting the internal entry: %v", d)
	}
}

// TestHostPort: a HostPort frontend is written with the NodePort and
// HostPort flags (the NodePort programs balance it), its unspecified
// surrogate too.
func TestHostPort(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	for _, fe := range []string{"0.0.0.0:8080", "192.0.2.10:8080"} {
		s := svc(fe, "10.0.1.5:80")
		s.Type = datapath.SVCTypeHostPort
		if err := w.UpsertService(s); err != nil {
			t.Fatal(err)
		}
	}
	for fe, s := range dump(t, m) {
		if s.Flags != lbmap.FlagNodePort|lbmap.FlagHostPort || len(s.Slots) != 1 {
			t.Errorf("%s: flags %#x, %d slots; want NodePort|HostPort, 1", fe, s.Flags, len(s.Slots))
		}
	}
}
