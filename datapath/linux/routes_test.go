package linux_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
)

func TestNodeRoutesCarryTCPBetweenNodes(t *testing.T) {
	ctx := context.Background()
	nodeA, dpA := newNode(t)
	nodeB, dpB := newNode(t)
	ipA, ipB := netip.MustParseAddr("192.168.50.1"), netip.MustParseAddr("192.168.50.2")
	netnstest.Join(t, nodeA, nodeB, ipA, ipB)
	cidrA, cidrB := netip.MustParsePrefix("10.0.1.0/24"), netip.MustParsePrefix("10.0.2.0/24")

	podA, podB := netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod")
	a := spec(1, podA, "10.0.1.5", "")
	b := spec(1, podB, "10.0.2.5", "")
	b.GatewayIPv4 = netip.MustParseAddr("10.0.2.1")
	if _, err := dpA.CreateEndpointLink(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := dpB.CreateEndpointLink(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		dp   datapath.NodeRoutes
		cidr netip.Prefix
		via  netip.Addr
	}{{dpA, cidrB, ipB}, {dpB, cidrA, ipA}} {
		if err := r.dp.UpsertNodeRoute(ctx, r.cidr, r.via); err != nil {
			t.Fatal(err)
		}
		// Idempotent.
		if err := r.dp.UpsertNodeRoute(ctx, r.cidr, r.via); err != nil {
			t.Fatal(err)
		}
	}
	stop, err := netnstest.Echo(podB, b.IPv4, 9000)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := netnstest.Dial(podA, b.IPv4, 9000, 5*time.Second); err != nil {
		t.Fatalf("pod on node A to pod on node B: %v", err)
	}

	if err := dpA.DeleteNodeRoute(ctx, cidrB, ipB); err != nil {
		t.Fatal(err)
	}
	if err := dpA.DeleteNodeRoute(ctx, cidrB, ipB); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	netnstest.Must(t, nodeA, func() error {
		routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, r := range routes {
			if r.Dst != nil && r.Dst.String() == cidrB.String() {
				t.Errorf("route to %s left: %s", cidrB, r)
			}
		}
		return nil
	})
	if err := netnstest.Dial(podA, b.IPv4, 9000, time.Second); err == nil {
		t.Fatal("dial succeeded without the route to node B's pod CIDR")
	}
}
