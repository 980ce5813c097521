package loadercell_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// TestDatapathAdapter checks the control plane's view of the loader on
// real pinned maps: the errors it translates and the ipcache writer.
func TestDatapathAdapter(t *testing.T) {
	root := bpfmaptest.Root(t)
	var (
		pm  datapath.PolicyMapWriter
		ld  datapath.Loader
		ipw datapath.IPCacheMapWriter
		lbw datapath.LBMapWriter
	)
	celltest.StartWithFlags(t, []string{"bpf-root=" + root, "bpf-policy-map-max=2"}, loadercell.Cell,
		celltest.Capture(&pm), celltest.Capture(&ld), celltest.Capture(&ipw), celltest.Capture(&lbw))
	ctx := context.Background()

	t.Run("policy map full", func(t *testing.T) {
		ms := policy.MapState{}
		for port := uint16(1); port <= 3; port++ {
			ms[policy.Key{Identity: 300, Direction: policy.Ingress, Proto: policy.ProtoTCP, Port: port, PrefixLen: 16}] = policy.Entry{}
		}
		_, _, err := pm.SyncPolicyMap(7, ms)
		var full *datapath.PolicyMapFullError
		if !errors.As(err, &full) || !errors.Is(err, datapath.ErrPolicyMapFull) || full.ID != 7 || full.Max != 2 {
			t.Fatalf("SyncPolicyMap of 3 keys into 2: %v, want a *datapath.PolicyMapFullError for endpoint 7, max 2", err)
		}
	})

	t.Run("restore without programs", func(t *testing.T) {
		if err := ld.Restore(ctx, 9, 1); !errors.Is(err, datapath.ErrNotAttached) {
			t.Fatalf("Restore of an endpoint without links: %v, want datapath.ErrNotAttached", err)
		}
	})

	t.Run("delete policy map after detach", func(t *testing.T) {
		if _, _, err := pm.SyncPolicyMap(5, policy.MapState{}); err != nil {
			t.Fatal(err)
		}
		if err := ld.Detach(ctx, 5); err != nil {
			t.Fatal(err)
		}
		if err := pm.DeletePolicyMap(5); err != nil {
			t.Fatalf("DeletePolicyMap after Detach: %v", err)
		}
	})

	t.Run("ipcache", func(t *testing.T) {
		e := func(p string, id int) datapath.IPCacheMapEntry {
			return datapath.IPCacheMapEntry{Prefix: netip.MustParsePrefix(p), Identity: identity.NumericIdentity(id)}
		}
		if err := ipw.ApplyIPCache([]datapath.IPCacheMapChange{{Entry: e("10.0.1.2/32", 300)}, {Entry: e("10.0.0.0/8", 16777217)}}); err != nil {
			t.Fatal(err)
		}
		added, removed, err := ipw.ReconcileIPCache([]datapath.IPCacheMapEntry{e("10.0.1.2/32", 300), e("10.0.1.3/32", 301)})
		if err != nil || added != 1 || removed != 1 {
			t.Fatalf("ReconcileIPCache = %d added, %d removed, %v; want 1, 1", added, removed, err)
		}
		err = ipw.ApplyIPCache([]datapath.IPCacheMapChange{{Entry: datapath.IPCacheMapEntry{}}})
		if err == nil {
			t.Fatal("ApplyIPCache of an invalid prefix succeeded")
		}
	})

	t.Run("load balancing", func(t *testing.T) {
		fe := datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.10"), Port: 80, Proto: datapath.ProtoTCP}
		be := datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.0.1.2"), Port: 8080, Proto: datapath.ProtoTCP}}
		if err := lbw.UpsertService(datapath.LBService{Frontend: fe, Backends: []datapath.LBBackend{be}}); err != nil {
			t.Fatal(err)
		}
		m, err := lbmap.OpenMaps(slog.New(slog.NewTextHandler(io.Discard, nil)), root)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		svcs, err := m.Dump()
		if err != nil || len(svcs) != 1 || svcs[0].Frontend != fe || len(svcs[0].Slots) != 1 || svcs[0].Slots[0].Backend != be.Addr {
			t.Fatalf("pinned maps hold %+v (%v), want %v -> %v", svcs, err, fe, be.Addr)
		}
		added, removed, err := lbw.ReconcileServices(slices.Values([]datapath.LBService(nil)))
		if err != nil || added != 0 || removed != 1 {
			t.Fatalf("ReconcileServices(nil) = %d, %d, %v; want 0 added, 1 removed", added, removed, err)
		}
	})
}
