package linux_test

import (
	"testing"

	"github.com/vishvananda/netlink"

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
	if !v.FlowBased || v.Port != 8472 || v.Index != first || v.OperState == netlink.OperDown || v.MTU != tunnel.BaseMTU {
		t.Fatalf("device %+v: want external, port 8472, ifindex %d, up, MTU %d", v, first, tunnel.BaseMTU)
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
}
