package linux_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/tunnel"
)

// TestTunnelDevice: the device is created in collect-metadata mode on
// the port, kept (same ifindex) by a restarted agent, recreated when the
// port changed, and removed in native mode.
func TestTunnelDevice(t *testing.T) {
	nodeNS, d := newNode(t)
	link := func() *netlink.Vxlan {
		t.Helper()
		var v *netlink.Vxlan
		netnstest.Must(t, nodeNS, func() error {
			l, err := netlink.LinkByName(tunnel.DeviceName)
			if err != nil {
				return err
			}
			v, _ = l.(*netlink.Vxlan)
			return nil
		})
		if v == nil {
			t.Fatalf("%s is not a vxlan device", tunnel.DeviceName)
		}
		return v
	}
	first, err := d.EnsureTunnelDevice(8472)
	if err != nil {
		t.Fatal(err)
	}
	v := link()
	if !v.FlowBased || v.Port != 8472 || v.Index != first || v.Flags&net.FlagUp == 0 || v.RawFlags&unix.IFF_NOARP == 0 || v.MTU != tunnel.BaseMTU {
		t.Fatalf("device %+v: want external, port 8472, ifindex %d, up, noarp, MTU %d", v, first, tunnel.BaseMTU)
	}
	if d.TunnelIfIndex() != first {
		t.Fatalf("TunnelIfIndex %d, want %d", d.TunnelIfIndex(), first)
	}

	// Node routes go through the device, an IPv6 pod CIDR via an IPv4 node too.
	ctx := context.Background()
	for _, c := range []string{"10.9.0.0/24", "fd00:9::/64"} {
		if err := d.UpsertNodeRoute(ctx, netip.MustParsePrefix(c), netip.MustParseAddr("192.168.9.9")); err != nil {
			t.Fatal(err)
		}
		netnstest.Must(t, nodeNS, func() error {
			rs, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Dst: ipNet(c)}, netlink.RT_FILTER_DST)
			if err != nil {
				return err
			}
			if len(rs) != 1 || rs[0].LinkIndex != first || rs[0].Gw != nil || rs[0].MTU != 1450 {
				t.Errorf("routes to %s: %+v, want one through the tunnel device (%d) with MTU 1450", c, rs, first)
			}
			return nil
		})
		if err := d.DeleteNodeRoute(ctx, netip.MustParsePrefix(c), netip.MustParseAddr("192.168.9.9")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.CheckTunnelDevice(8472); err != nil {
		t.Fatalf("CheckTunnelDevice: %v", err)
	}
	if err := d.CheckTunnelDevice(4789); err == nil || !strings.Contains(err.Error(), "not a vxlan external device on UDP port 4789") {
		t.Fatalf("CheckTunnelDevice of another port = %v, want it named", err)
	}
	again, err := d.EnsureTunnelDevice(8472)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatalf("restart: ifindex %d, want the kept device's %d", again, first)
	}
	other, err := d.EnsureTunnelDevice(4789)
	if err != nil {
		t.Fatal(err)
	}
	if v := link(); v.Port != 4789 || v.Index != other || other == first {
		t.Fatalf("port change: device port %d ifindex %d (was %d), want a new device on 4789", v.Port, v.Index, first)
	}
	netnstest.Must(t, nodeNS, func() error { return netlink.LinkSetDown(link()) })
	if err := d.CheckTunnelDevice(4789); err == nil || !strings.Contains(err.Error(), "apiary_vxlan is down") {
		t.Fatalf("CheckTunnelDevice of a device set down = %v, want it named", err)
	}
	netnstest.Must(t, nodeNS, func() error { return netlink.LinkDel(link()) })
	if err := d.CheckTunnelDevice(4789); err == nil || !strings.Contains(err.Error(), "apiary_vxlan is gone") {
		t.Fatalf("CheckTunnelDevice of a deleted device = %v, want it named", err)
	}
	if err := d.RemoveTunnelDevice(); err != nil {
		t.Fatal(err)
	}
	netnstest.Must(t, nodeNS, func() error {
		if _, err := netlink.LinkByName(tunnel.DeviceName); err == nil {
			t.Errorf("%s still there after RemoveTunnelDevice", tunnel.DeviceName)
		}
		return nil
	})
	if err := d.RemoveTunnelDevice(); err != nil {
		t.Fatalf("removing no device: %v", err)
	}
	if err := d.UpsertNodeRoute(ctx, netip.MustParsePrefix("fd00:9::/64"), netip.MustParseAddr("192.168.9.9")); err == nil {
		t.Fatal("native routing: an IPv6 pod CIDR via an IPv4 node IP was accepted")
	}
}

func ipNet(cidr string) *net.IPNet {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		panic(err)
	}
	return n
}
