package linux_test

import (
	"context"
	"errors"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// node is a node namespace with the datapath working in it.
func newNode(t *testing.T) (string, *linux.Datapath) {
	t.Helper()
	nodeNS := netnstest.New(t, "apiary-node")
	d, err := linux.New(nodeNS, celltest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return nodeNS, d
}

func spec(id datapath.EndpointID, ns, v4, v6 string) datapath.EndpointLinkSpec {
	s := datapath.EndpointLinkSpec{ID: id, NetNSPath: ns, IfName: "eth0", MTU: 1450,
		GatewayIPv4: netip.MustParseAddr("10.0.1.1"), GatewayIPv6: netip.MustParseAddr("fd00:1::1")}
	if v4 != "" {
		s.IPv4 = netip.MustParseAddr(v4)
	}
	if v6 != "" {
		s.IPv6 = netip.MustParseAddr(v6)
	}
	return s
}

func TestEndpointLinksCarryTCP(t *testing.T) {
	ctx := context.Background()
	nodeNS, d := newNode(t)
	podA, podB := netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod")
	a := spec(11, podA, "10.0.1.11", "fd00:1::11")
	b := spec(12, podB, "10.0.1.12", "fd00:1::12")
	for _, s := range []datapath.EndpointLinkSpec{a, b} {
		l, err := d.CreateEndpointLink(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.DeleteEndpointLink(ctx, s) })
		if l.IfName != s.HostIfName() || l.IfIndex == 0 || l.MAC == "" || l.ContainerMAC == "" {
			t.Fatalf("link %+v", l)
		}
		got, err := d.LookupEndpointLink(ctx, s.ID)
		if err != nil || got.IfIndex != l.IfIndex {
			t.Fatalf("lookup %d: %+v %v, want ifindex %d", s.ID, got, err, l.IfIndex)
		}
	}
	netnstest.Must(t, podA, func() error {
		l, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		if l.Attrs().MTU != 1450 {
			t.Errorf("MTU of eth0 %d, want 1450", l.Attrs().MTU)
		}
		return nil
	})
	for _, ip := range []netip.Addr{b.IPv4, b.IPv6} {
		stop, err := netnstest.Echo(podB, ip, 8080)
		if err != nil {
			t.Fatal(err)
		}
		if err := netnstest.Dial(podA, ip, 8080, 5*time.Second); err != nil {
			t.Errorf("pod A to pod B through the node: %v", err)
		}
		stop()
	}

	// Delete leaves nothing behind, and a second delete is no error.
	for _, s := range []datapath.EndpointLinkSpec{a, b} {
		if err := d.DeleteEndpointLink(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := d.DeleteEndpointLink(ctx, s); err != nil {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := d.LookupEndpointLink(ctx, s.ID); !errors.Is(err, datapath.ErrLinkNotFound) {
			t.Fatalf("lookup after delete: %v, want ErrLinkNotFound", err)
		}
	}
	netnstest.Must(t, nodeNS, func() error {
		links, err := netlink.LinkList()
		if err != nil {
			return err
		}
		for _, l := range links {
			if l.Attrs().Name != "lo" {
				t.Errorf("node namespace still has %s", l.Attrs().Name)
			}
		}
		for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
			routes, err := netlink.RouteListFiltered(fam, &netlink.Route{Table: 254}, netlink.RT_FILTER_TABLE)
			if err != nil {
				return err
			}
			for _, r := range routes {
				if r.Dst != nil && (r.Dst.IP.Equal(a.IPv4.AsSlice()) || r.Dst.IP.Equal(b.IPv6.AsSlice())) {
					t.Errorf("route left behind: %s", r)
				}
			}
		}
		return nil
	})
	netnstest.Must(t, podA, func() error {
		if _, err := netlink.LinkByName("eth0"); err == nil {
			t.Error("eth0 left in the pod namespace")
		}
		return nil
	})
}

func TestCreateEndpointLinkFailsWhole(t *testing.T) {
	ctx := context.Background()
	nodeNS, d := newNode(t)
	pod := netnstest.New(t, "apiary-pod")
	// An eth0 exists in the pod namespace already: the peer cannot take
	// the name, and nothing is left in the node namespace.
	netnstest.Must(t, pod, func() error {
		return netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0"}, PeerName: "other0"})
	})
	var ise *datapath.InvalidSpecError
	if _, err := d.CreateEndpointLink(ctx, spec(21, pod, "10.0.1.21", "")); !errors.As(err, &ise) || ise.Field != "IfName" {
		t.Fatalf("create with a taken interface name: %v, want an InvalidSpecError of field IfName", err)
	}
	netnstest.Must(t, nodeNS, func() error {
		if _, err := netlink.LinkByName("lxc21"); err == nil {
			t.Error("lxc21 left behind after a failed create")
		}
		return nil
	})

	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give datapath.EndpointLinkSpec
	}{
		{"no namespace", spec(22, "/var/run/netns/does-not-exist", "10.0.1.22", "")},
		{"a named pipe as namespace", spec(27, fifo, "10.0.1.27", "")},
		{"a mount namespace", spec(28, "/proc/self/ns/mnt", "10.0.1.28", "")},
		{"the node's namespace", spec(26, nodeNS, "10.0.1.26", "")},
		{"no address", spec(23, pod, "", "")},
		{"long name", func() datapath.EndpointLinkSpec {
			s := spec(24, pod, "10.0.1.24", "")
			s.IfName = "a-very-long-name0"
			return s
		}()},
		{"address out of gateway family", func() datapath.EndpointLinkSpec {
			s := spec(25, pod, "", "fd00:1::25")
			s.GatewayIPv6 = netip.Addr{}
			return s
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := d.CreateEndpointLink(ctx, tt.give); err == nil {
				t.Fatal("no error")
			} else {
				t.Log(err)
			}
			netnstest.Must(t, nodeNS, func() error {
				if _, err := netlink.LinkByName(tt.give.HostIfName()); err == nil {
					t.Errorf("%s left behind", tt.give.HostIfName())
				}
				return nil
			})
		})
	}
}

// TestCreateReplacesLeftoverLink: an agent killed while creating
// endpoint 29 left lxc29 in the node namespace with its peer eth0 in the
// pod's; creating endpoint 29 again deletes the leftover pair instead of
// failing with "file exists" for ever.
func TestCreateReplacesLeftoverLink(t *testing.T) {
	ctx := context.Background()
	nodeNS, d := newNode(t)
	pod := netnstest.New(t, "apiary-pod")
	podNS, err := netnsutil.Open(pod)
	if err != nil {
		t.Fatal(err)
	}
	defer podNS.Close()
	netnstest.Must(t, nodeNS, func() error {
		return netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "lxc29"}, PeerName: "eth0",
			PeerNamespace: netlink.NsFd(int(podNS))})
	})
	link, err := d.CreateEndpointLink(ctx, spec(29, pod, "10.0.1.29", ""))
	if err != nil {
		t.Fatalf("create over a leftover lxc29: %v", err)
	}
	if link.IfName != "lxc29" || link.IfIndex == 0 {
		t.Fatalf("link %+v", link)
	}
}

// TestSecondInterfaceKeepsDefaultRoute: a second endpoint in a pod's
// namespace (net1 beside eth0) does not take the pod's default route or
// its route to the gateway.
func TestSecondInterfaceKeepsDefaultRoute(t *testing.T) {
	ctx := context.Background()
	_, d := newNode(t)
	pod := netnstest.New(t, "apiary-pod")
	first := spec(31, pod, "10.0.1.31", "")
	second := spec(32, pod, "10.0.1.32", "")
	second.IfName = "net1"
	for _, s := range []datapath.EndpointLinkSpec{first, second} {
		if _, err := d.CreateEndpointLink(ctx, s); err != nil {
			t.Fatalf("create %s: %v", s.IfName, err)
		}
	}
	netnstest.Must(t, pod, func() error {
		eth0, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, r := range routes {
			isDefault := r.Dst == nil || r.Dst.String() == "0.0.0.0/0"
			isGateway := r.Dst != nil && r.Dst.String() == "10.0.1.1/32"
			if (isDefault || isGateway) && r.LinkIndex != eth0.Attrs().Index {
				t.Errorf("route %s goes out of interface %d, want eth0 (%d)", r, r.LinkIndex, eth0.Attrs().Index)
			}
		}
		return nil
	})
}
