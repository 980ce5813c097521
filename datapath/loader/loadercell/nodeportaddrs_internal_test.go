package loadercell

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestChooseAddrs: without CIDRs, the first usable address of each
// family that is not a secondary one; with CIDRs, every usable one
// within them; never a link-local, loopback, tentative, failed or
// deprecated one.
func TestChooseAddrs(t *testing.T) {
	a := func(s string, flags int) netlink.Addr {
		p := netip.MustParsePrefix(s)
		return netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}, Flags: flags}
	}
	dev := []netlink.Addr{
		a("127.0.0.1/8", 0), a("169.254.3.3/16", 0), a("fe80::7/64", 0),
		a("fd00:9::1/64", unix.IFA_F_TENTATIVE), a("fd00:8::1/64", unix.IFA_F_DEPRECATED), a("fd00:7::1/64", unix.IFA_F_DADFAILED),
		a("10.2.0.99/24", unix.IFA_F_SECONDARY), a("10.2.0.1/24", 0), a("10.3.0.1/24", 0),
		a("fd00:2::1/64", 0), a("2001:db8::1/64", 0),
	}
	for _, tt := range []struct {
		name  string
		cidrs []string
		want  []string
	}{
		{"primary of each family", nil, []string{"10.2.0.1", "fd00:2::1"}},
		{"within the CIDRs", []string{"10.2.0.0/16", "fd00::/8", "127.0.0.0/8", "fe80::/10"}, []string{"10.2.0.99", "10.2.0.1", "fd00:2::1"}},
		{"none within", []string{"192.0.2.0/24"}, nil},
	} {
		var cidrs []netip.Prefix
		for _, c := range tt.cidrs {
			cidrs = append(cidrs, netip.MustParsePrefix(c))
		}
		var got []string
		for _, ip := range chooseAddrs(dev, cidrs) {
			got = append(got, ip.String())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
