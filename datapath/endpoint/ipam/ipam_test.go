package ipam_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/datapath/endpoint/ipam"
)

func newIPAM(t *testing.T, v4, v6 string) *ipam.IPAM {
	t.Helper()
	var p4, p6 netip.Prefix
	if v4 != "" {
		p4 = netip.MustParsePrefix(v4)
	}
	if v6 != "" {
		p6 = netip.MustParsePrefix(v6)
	}
	i, err := ipam.New(p4, p6)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func TestAllocateSkipsReservedAndWraps(t *testing.T) {
	i := newIPAM(t, "10.0.1.0/29", "fd00:1::/125")
	if r4, r6 := i.Routers(); r4.String() != "10.0.1.1" || r6.String() != "fd00:1::1" {
		t.Fatalf("routers %s %s, want 10.0.1.1 fd00:1::1", r4, r6)
	}
	if _, _, err := i.Allocate("a", true, true); !errors.Is(err, ipam.ErrRestoring) {
		t.Fatalf("allocate while restoring: %v, want ErrRestoring", err)
	}
	i.RestoreDone()
	// /29: .0 network, .1 router, .7 broadcast: .2-.6 usable (5).
	var got []string
	for range 5 {
		v4, v6, err := i.Allocate("a", true, true)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v4.String()+" "+v6.String())
	}
	want := []string{"10.0.1.2 fd00:1::2", "10.0.1.3 fd00:1::3", "10.0.1.4 fd00:1::4", "10.0.1.5 fd00:1::5", "10.0.1.6 fd00:1::6"}
	for n := range want {
		if got[n] != want[n] {
			t.Fatalf("allocation %d: %s, want %s", n, got[n], want[n])
		}
	}
	// IPv4 is full; IPv6 (/125, 6 usable) is not: the failed IPv4 part
	// allocates no IPv6 address.
	if _, _, err := i.Allocate("b", true, true); !errors.Is(err, ipam.ErrFull) {
		t.Fatalf("allocate from a full CIDR: %v, want ErrFull", err)
	}
	if err := i.Release(netip.MustParseAddr("10.0.1.3")); err != nil {
		t.Fatal(err)
	}
	// The IPv6 CIDR has one left (::7): a second failure must not leak it.
	v4, v6, err := i.Allocate("c", true, true)
	if err != nil || v4.String() != "10.0.1.3" || v6.String() != "fd00:1::7" {
		t.Fatalf("allocate after release: %s %s %v, want 10.0.1.3 fd00:1::7", v4, v6, err)
	}
	if _, _, err := i.Allocate("d", false, true); !errors.Is(err, ipam.ErrFull) {
		t.Fatalf("IPv6 full: %v", err)
	}
}

func TestAllocateIP(t *testing.T) {
	i := newIPAM(t, "10.0.1.0/24", "")
	if err := i.AllocateIP(netip.MustParseAddr("10.0.1.9"), "restored"); err != nil {
		t.Fatalf("restore while restoring: %v", err)
	}
	tests := []struct {
		name string
		give string
		want error
	}{
		{"outside", "10.0.2.9", ipam.ErrNotInCIDR},
		{"network", "10.0.1.0", ipam.ErrReserved},
		{"router", "10.0.1.1", ipam.ErrReserved},
		{"broadcast", "10.0.1.255", ipam.ErrReserved},
		{"taken", "10.0.1.9", ipam.ErrInUse},
		{"no IPv6 CIDR", "fd00::5", ipam.ErrNoCIDR},
		{"free", "10.0.1.10", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := i.AllocateIP(netip.MustParseAddr(tt.give), "x")
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("AllocateIP(%s) = %v, want %v", tt.give, err, tt.want)
			}
		})
	}
	i.RestoreDone()
	v4, _, err := i.Allocate("new", true, false)
	if err != nil || v4.String() != "10.0.1.2" {
		t.Fatalf("first new allocation %s %v", v4, err)
	}
	if err := i.Release(netip.MustParseAddr("10.0.1.77")); !errors.Is(err, ipam.ErrNotAllocated) {
		t.Fatalf("release of a free address: %v", err)
	}
	if n := len(i.Allocated()); n != 3 {
		t.Fatalf("%d allocated, want 3", n)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct{ name, v4, v6 string }{
		{"too small", "10.0.0.0/31", ""},
		{"host bits", "10.0.0.1/24", ""},
		{"v6 as v4", "fd00::/64", ""},
		{"v4 as v6", "", "10.0.0.0/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p4, p6 netip.Prefix
			if tt.v4 != "" {
				p4 = netip.MustParsePrefix(tt.v4)
			}
			if tt.v6 != "" {
				p6 = netip.MustParsePrefix(tt.v6)
			}
			if _, err := ipam.New(p4, p6); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
