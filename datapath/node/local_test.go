package node_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath/node"
)

func TestFromLocalNode(t *testing.T) {
	v4, v6 := netip.MustParseAddr("192.0.2.5"), netip.MustParseAddr("fd00::5")
	tests := []struct {
		name   string
		give   localnode.LocalNode
		want   []netip.Addr
		wantV4 netip.Addr
		wantV6 netip.Addr
	}{
		{name: "IPv4 node", give: localnode.LocalNode{Name: "a", IP: v4}, want: []netip.Addr{v4}, wantV4: v4},
		{name: "IPv6 node", give: localnode.LocalNode{Name: "a", IP: v6}, want: []netip.Addr{v6}, wantV6: v6},
		{name: "dual stack", give: localnode.LocalNode{Name: "a", IP: v6, SecondaryIP: v4}, want: []netip.Addr{v6, v4}, wantV4: v4, wantV6: v6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := node.FromLocalNode(tc.give)
			var got []netip.Addr
			for _, a := range n.IPAddresses {
				if a.Type != node.NodeInternalIP {
					t.Errorf("address %s has type %s, want InternalIP", a.IP, a.Type)
				}
				got = append(got, a.IP)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("addresses %v, want %v", got, tc.want)
			}
			if n.PrimaryIP(false) != tc.wantV4 || n.PrimaryIP(true) != tc.wantV6 {
				t.Errorf("primary IPs %s, %s; want %s, %s", n.PrimaryIP(false), n.PrimaryIP(true), tc.wantV4, tc.wantV6)
			}
		})
	}
}
