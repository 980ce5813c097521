package ipcache

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
)

// randomPrefix returns one of a small set of prefixes of both families,
// so that random operations hit existing ones often.
func randomPrefix(r *rand.Rand) netip.Prefix {
	if r.IntN(4) == 0 {
		a := netip.AddrFrom16([16]byte{0xfd, 0, 15: byte(r.IntN(64))})
		p, _ := a.Prefix(64 + r.IntN(65))
		return p
	}
	a := netip.AddrFrom4([4]byte{10, byte(r.IntN(4)), byte(r.IntN(16)), byte(r.IntN(64))})
	p, _ := a.Prefix(8 + r.IntN(25))
	return p
}

// TestPrefixIndexMatchesSortedSet runs random inserts and removes (enough
// to split and merge blocks) against a sorted slice.
func TestPrefixIndexMatchesSortedSet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var x prefixIndex
	var want []netip.Prefix
	for step := range 60000 {
		p := randomPrefix(r)
		i, found := slices.BinarySearchFunc(want, p, ComparePrefixes)
		// Grow for the first half, then shrink: blocks split, then merge.
		if step < 30000 && r.IntN(4) > 0 || step >= 30000 && r.IntN(4) == 0 {
			x.insert(p)
			if !found {
				want = slices.Insert(want, i, p)
			}
		} else {
			x.remove(p)
			if found {
				want = slices.Delete(want, i, i+1)
			}
		}
		if step%5000 == 0 || step == 59999 {
			checkIndex(t, &x, want)
		}
	}
	if len(want) < 100 {
		t.Fatalf("only %d prefixes left: the test does not exercise blocks", len(want))
	}
}

func checkIndex(t *testing.T, x *prefixIndex, want []netip.Prefix) {
	t.Helper()
	var got []netip.Prefix
	x.ascend(netip.Prefix{}, false, func(p netip.Prefix) bool { got = append(got, p); return true })
	if !slices.Equal(got, want) || x.len() != len(want) {
		t.Fatalf("index holds %d prefixes (len %d), want %d in order", len(got), x.len(), len(want))
	}
	for bi, b := range x.blocks {
		if len(b) == 0 || len(b) > indexBlock {
			t.Fatalf("block %d holds %d prefixes", bi, len(b))
		}
	}
	for _, i := range []int{0, len(want) / 3, len(want) - 1} {
		var after []netip.Prefix
		x.ascend(want[i], false, func(p netip.Prefix) bool { after = append(after, p); return len(after) < 3 })
		if wantAfter := want[i+1 : min(i+4, len(want))]; !slices.Equal(after, wantAfter) {
			t.Fatalf("after %s: %v, want %v", want[i], after, wantAfter)
		}
	}
}

func TestEntriesAfter(t *testing.T) {
	c := newCache(nil, nil, nil)
	all := []string{
		"0.0.0.0/0", "10.0.0.0/8", "10.0.0.0/16", "10.0.0.1/32", "10.0.0.2/32", "10.1.0.0/16",
		"10.1.2.3/32", "11.0.0.1/32", "fd00::/64", "fd00::1/128",
	}
	for _, s := range all {
		p := netip.MustParsePrefix(s)
		c.setEntryLocked(p, &Entry{Prefix: p, Identity: 2})
	}
	pfx := func(s string) netip.Prefix {
		if s == "" {
			return netip.Prefix{}
		}
		return netip.MustParsePrefix(s)
	}
	tests := []struct {
		name          string
		within, after string
		limit         int
		want          []string
		wantMore      bool
	}{
		{name: "first page", limit: 3, want: all[:3], wantMore: true},
		{name: "next page", after: "10.0.0.0/16", limit: 3, want: all[3:6], wantMore: true},
		{name: "last page", after: "10.1.0.0/16", limit: 5, want: all[6:]},
		{name: "exactly the rest", after: "10.1.2.3/32", limit: 3, want: all[7:]},
		{name: "after a prefix that is gone", after: "10.0.0.3/32", limit: 2, want: all[5:7], wantMore: true},
		{name: "within", within: "10.0.0.0/8", limit: 10, want: all[1:7]},
		{name: "within, paged", within: "10.0.0.0/8", after: "10.0.0.1/32", limit: 2,
			want: []string{"10.0.0.2/32", "10.1.0.0/16"}, wantMore: true},
		{name: "within skips shorter prefixes", within: "10.0.0.0/16", limit: 10,
			want: []string{"10.0.0.0/16", "10.0.0.1/32", "10.0.0.2/32"}},
		{name: "within IPv6", within: "fd00::/16", limit: 10, want: all[8:]},
		{name: "within, after past the range", within: "10.0.0.0/16", after: "10.1.0.0/16", limit: 10},
		{name: "within nothing", within: "192.168.0.0/16", limit: 10},
		{name: "zero limit", limit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, more := c.EntriesAfter(pfx(tt.within), pfx(tt.after), tt.limit)
			var got []string
			for _, e := range page {
				got = append(got, e.Prefix.String())
			}
			if !slices.Equal(got, tt.want) || more != tt.wantMore {
				t.Errorf("EntriesAfter = %v more=%v, want %v more=%v", got, more, tt.want, tt.wantMore)
			}
		})
	}
}
