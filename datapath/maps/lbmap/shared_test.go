package lbmap_test

import (
	"net/netip"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// backendState returns the state the backends map holds for the IPv4
// backend at addr.
func backendState(t *testing.T, root, addr string) datapath.BackendState {
	t.Helper()
	m, err := ebpf.LoadPinnedMap(filepath.Join(root, lbmap.Backends4Name), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := netip.MustParseAddrPort(addr)
	var (
		id uint32
		v  lbmap.Backend4Value
	)
	for it := m.Iterate(); it.Next(&id, &v); {
		if netip.AddrFrom4(v.Address) == want.Addr() {
			return datapath.BackendState(v.State)
		}
	}
	t.Fatalf("no backend entry for %s", addr)
	return 0
}

// TestSharedBackendStateIsTheMostActive: a backend two services share
// holds the most active state either gives it, whether the services are
// written one by one or in a reconcile's bulk write next to a frontend
// the maps already hold, and follows when one service changes it or
// drops it.
func TestSharedBackendStateIsTheMostActive(t *testing.T) {
	const be = "10.0.1.1:8080"
	a, b := "10.96.0.10:80", "10.96.0.11:80"
	t.Run("bulk", func(t *testing.T) {
		root := bpfmaptest.Root(t)
		w, _ := open(t, root)
		if _, _, err := w.ReconcileServices(slices.Values([]datapath.LBService{svc(a, "~"+be), svc(b, be)})); err != nil {
			t.Fatal(err)
		}
		if st := backendState(t, root, be); st != datapath.BackendActive {
			t.Errorf("state %d after a bulk write of a terminating and an active reference, want active", st)
		}
	})
	t.Run("bulk next to a held frontend", func(t *testing.T) {
		root := bpfmaptest.Root(t)
		w, _ := open(t, root)
		if err := w.UpsertService(svc(a, be)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.ReconcileServices(slices.Values([]datapath.LBService{svc(a, be), svc(b, "~"+be)})); err != nil {
			t.Fatal(err)
		}
		if st := backendState(t, root, be); st != datapath.BackendActive {
			t.Errorf("state %d after a new frontend took the backend as terminating, want active (the held frontend's)", st)
		}
	})
	t.Run("one by one", func(t *testing.T) {
		root := bpfmaptest.Root(t)
		w, _ := open(t, root)
		steps := []struct {
			name string
			give datapath.LBService
			want datapath.BackendState
		}{
			{"a terminating", svc(a, "~"+be), datapath.BackendTerminating},
			{"b active", svc(b, be), datapath.BackendActive},
			{"a terminating again", svc(a, "~"+be), datapath.BackendActive},
			{"b drops it", svc(b), datapath.BackendTerminating},
			{"a unchanged", svc(a, "~"+be), datapath.BackendTerminating},
			{"a active", svc(a, be), datapath.BackendActive},
		}
		for _, s := range steps {
			if err := w.UpsertService(s.give); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if st := backendState(t, root, be); st != s.want {
				t.Errorf("%s: state %d, want %d", s.name, st, s.want)
			}
		}
	})
}
