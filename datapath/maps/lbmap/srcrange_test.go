package lbmap_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// lbSvc is a LoadBalancer frontend with source ranges.
func lbSvc(fe string, ranges []netip.Prefix, backends ...string) datapath.LBService {
	s := svc(fe, backends...)
	s.Type, s.SourceRanges = datapath.SVCTypeLoadBalancer, ranges
	return s
}

// wantRanges checks frontend fe's flag and source ranges in the maps.
func wantRanges(t *testing.T, m *lbmap.Maps, fe string, want []netip.Prefix) {
	t.Helper()
	s, ok := dump(t, m)[fe]
	if !ok {
		t.Fatalf("frontend %s not in the maps", fe)
	}
	if flagged := s.Flags&lbmap.FlagSourceRange != 0; flagged != (len(want) > 0) {
		t.Errorf("%s: source-range flag %v, want %v", fe, flagged, len(want) > 0)
	}
	if !slices.Equal(s.SourceRanges, want) {
		t.Errorf("%s: source ranges %v, want %v", fe, s.SourceRanges, want)
	}
}

// TestSourceRanges writes, changes and removes the source ranges of
// frontends of both families: the maps hold exactly each frontend's
// list (sorted, each once) under its rev-NAT index, the flag with it;
// a deleted frontend leaves none; a restart reads them back and its
// reconcile removes what no frontend wants.
func TestSourceRanges(t *testing.T) {
	root := bpfmaptest.Root(t)
	w, m := open(t, root)
	v4 := lbSvc("192.0.2.10:80", prefixes("10.0.0.0/8", "192.168.1.0/24", "10.0.0.0/8"), "10.0.1.1:8080")
	v6 := lbSvc("[2001:db8::10]:80", prefixes("fd00::/8"), "[fd00::1:1]:8080")
	other := lbSvc("192.0.2.11:80", prefixes("10.0.0.0/8"), "10.0.1.2:8080")
	for _, s := range []datapath.LBService{v4, v6, other} {
		if err := w.UpsertService(s); err != nil {
			t.Fatal(err)
		}
	}
	wantRanges(t, m, "192.0.2.10:80/TCP", prefixes("10.0.0.0/8", "192.168.1.0/24"))
	wantRanges(t, m, "[2001:db8::10]:80/TCP", prefixes("fd00::/8"))
	wantRanges(t, m, "192.0.2.11:80/TCP", prefixes("10.0.0.0/8"))

	// Changed: one kept, one dropped, one added; the other frontend's
	// equal prefix stays.
	v4.SourceRanges = prefixes("192.168.1.0/24", "172.16.0.0/12")
	if err := w.UpsertService(v4); err != nil {
		t.Fatal(err)
	}
	wantRanges(t, m, "192.0.2.10:80/TCP", prefixes("172.16.0.0/12", "192.168.1.0/24"))
	wantRanges(t, m, "192.0.2.11:80/TCP", prefixes("10.0.0.0/8"))
	// None any more: the flag goes too.
	v6.SourceRanges = nil
	if err := w.UpsertService(v6); err != nil {
		t.Fatal(err)
	}
	wantRanges(t, m, "[2001:db8::10]:80/TCP", nil)
	v6.SourceRanges = prefixes("fd00:1::/32")
	if err := w.UpsertService(v6); err != nil {
		t.Fatal(err)
	}
	// A deleted frontend leaves no entry (counted over the whole map).
	if err := w.DeleteService(other.Frontend); err != nil {
		t.Fatal(err)
	}
	if n := countRanges(t, m); n != 3 {
		t.Errorf("%d source-range entries after the delete, want 3", n)
	}
	w.Close()

	// A restart reads them back; the reconcile keeps v4's, removes v6's
	// frontend and its prefixes.
	w2, m2 := open(t, root)
	if _, removed, err := w2.ReconcileServices(slices.Values([]datapath.LBService{v4})); err != nil || removed != 1 {
		t.Fatalf("reconcile: %d removed, %v", removed, err)
	}
	wantRanges(t, m2, "192.0.2.10:80/TCP", prefixes("172.16.0.0/12", "192.168.1.0/24"))
	if n := countRanges(t, m2); n != 2 {
		t.Errorf("%d source-range entries after the reconcile, want 2", n)
	}
	// The initial sync's bulk path (frontends the maps do not hold).
	fresh := lbSvc("192.0.2.20:443", prefixes("0.0.0.0/32"), "10.0.1.3:8443")
	if _, _, err := w2.ReconcileServices(slices.Values([]datapath.LBService{v4, fresh})); err != nil {
		t.Fatal(err)
	}
	wantRanges(t, m2, "192.0.2.20:443/TCP", prefixes("0.0.0.0/32"))
}

func countRanges(t *testing.T, m *lbmap.Maps) int {
	t.Helper()
	rs, err := m.SourceRanges()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ps := range rs {
		n += len(ps)
	}
	return n
}

// TestSourceRangesRefused: a prefix of the other family, an invalid
// one, or one with host bits set is refused with a message naming it,
// and nothing of the service changes.
func TestSourceRangesRefused(t *testing.T) {
	w, m := open(t, bpfmaptest.Root(t))
	good := lbSvc("192.0.2.10:80", prefixes("10.0.0.0/8"), "10.0.1.1:8080")
	if err := w.UpsertService(good); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ranges []netip.Prefix
		want   string
	}{
		{prefixes("10.0.0.0/8", "fd00::/8"), "sourceRanges[1]: fd00::/8 is not of the frontend's address family"},
		{[]netip.Prefix{{}}, "sourceRanges[0]: invalid Prefix is not a prefix"},
		{prefixes("10.1.2.3/8"), "sourceRanges[0]: 10.1.2.3/8 has bits set past its length (10.0.0.0/8)"},
	} {
		bad := lbSvc("192.0.2.10:80", tt.ranges, "10.0.1.9:8080")
		err := w.UpsertService(bad)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("source ranges %v: %v, want an error with %q", tt.ranges, err, tt.want)
		}
	}
	wantRanges(t, m, "192.0.2.10:80/TCP", prefixes("10.0.0.0/8"))
	if got := slotAddrs(dump(t, m)["192.0.2.10:80/TCP"]); !slices.Equal(got, []string{"10.0.1.1:8080"}) {
		t.Errorf("backends after the refusals: %v", got)
	}
}
