package ctgc_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/ctgc"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/policy"
)

// restored stands for the endpoint manager after a restore.
type restored []netip.Addr

func (restored) WaitForLocalRestore(context.Context) error { return nil }
func (r restored) EndpointAddrs() []netip.Addr             { return r }

// put writes an IPv4 entry src -> dst:80 of direction dir expiring at
// expires.
func put(t *testing.T, m *ctmap.Maps, src, dst string, dir policy.Direction, expires uint64) {
	t.Helper()
	k := ctmap.Key4{Saddr: netip.MustParseAddr(src).As4(), Daddr: netip.MustParseAddr(dst).As4(),
		Sport: ctmap.NetworkPort(40000), Dport: ctmap.NetworkPort(80), Proto: uint8(policy.ProtoTCP), Direction: uint8(dir)}
	ct4, _ := m.EBPF()
	if err := ct4.Put(k, ctmap.Value{Expires: expires}); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, m *ctmap.Maps) int {
	t.Helper()
	all, err := m.Dump()
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

// TestGC runs the collector on real conntrack maps: the first run deletes
// the expired entries and those of endpoints that were not restored, the
// later ones only expired entries; the metrics count it.
func TestGC(t *testing.T) {
	root := bpfmaptest.Root(t)
	m, err := ctmap.Open(celltest.Logger(t), root)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	now := ctmap.Now()
	live := now + 3600e9
	put(t, m, "10.0.1.2", "10.0.2.9", policy.Egress, live)  // restored endpoint's egress flow
	put(t, m, "10.0.2.9", "10.0.1.2", policy.Ingress, live) // restored endpoint's ingress flow
	put(t, m, "10.0.1.3", "10.0.2.9", policy.Egress, live)  // vanished endpoint's egress flow
	put(t, m, "10.0.2.9", "10.0.1.3", policy.Ingress, live) // vanished endpoint's ingress flow
	put(t, m, "10.0.1.2", "10.0.2.8", policy.Egress, 1)     // expired

	met := ctgc.NewMetrics()
	gc := ctgc.New(m, restored{netip.MustParseAddr("10.0.1.2")}, met, celltest.Logger(t))
	st, err := gc.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Alive != 2 || st.Expired != 1 || st.Orphaned != 2 || count(t, m) != 2 {
		t.Errorf("first run %+v, %d entries left; want 2 alive, 1 expired, 2 orphaned", st, count(t, m))
	}
	// An entry of an endpoint created since: later runs keep live entries.
	put(t, m, "10.0.1.4", "10.0.2.9", policy.Egress, live)
	put(t, m, "10.0.1.4", "10.0.2.7", policy.Egress, 1)
	st, err = gc.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Alive != 3 || st.Expired != 1 || st.Orphaned != 0 {
		t.Errorf("second run %+v, want 3 alive, 1 expired", st)
	}
	if got := testutil.ToFloat64(met.Deleted.WithLabelValues("expired")); got != 2 {
		t.Errorf("deleted{expired} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(met.Deleted.WithLabelValues("orphaned")); got != 2 {
		t.Errorf("deleted{orphaned} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(met.Entries.WithLabelValues("alive")); got != 3 {
		t.Errorf("entries{alive} = %v, want 3", got)
	}
	if got := testutil.ToFloat64(met.Runs.WithLabelValues("completed")); got != 2 {
		t.Errorf("runs{completed} = %v, want 2", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		give ctgc.Config
		ok   bool
	}{
		{"default", ctgc.DefaultConfig, true},
		{"zero", ctgc.Config{}, false},
		{"negative", ctgc.Config{ConntrackGCInterval: -1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.give.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
