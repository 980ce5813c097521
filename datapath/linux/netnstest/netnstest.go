package netnstest

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

var seq atomic.Uint64

// New creates a named network namespace with loopback up and returns its
// path (/var/run/netns/<name>); the test's cleanup deletes it. It skips
// the test when the process may not create namespaces.
func New(t testing.TB, prefix string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		celltest.SkipUnprivileged(t, "creating network namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN)")
	}
	name := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
	if err := netnsutil.NewNamed(name); err != nil {
		_ = netns.DeleteNamed(name)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete network namespace %s: %v", name, err)
		}
	})
	return filepath.Join("/var/run/netns", name)
}

// Must runs fn on a thread in the namespace at path
// (netnsutil.RunPath), failing the test on an error.
func Must(t testing.TB, path string, fn func() error) {
	t.Helper()
	if err := netnsutil.RunPath(path, fn); err != nil {
		t.Fatalf("in %s: %v", path, err)
	}
}

// Join connects two namespaces with a veth pair named "n0" on both
// sides, gives each side its address (/24) and brings both up: two
// "nodes" on one L2 network.
func Join(t testing.TB, nsA, nsB string, ipA, ipB netip.Addr) {
	t.Helper()
	b, err := netns.GetFromPath(nsB)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	Must(t, nsA, func() error {
		return netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "n0"}, PeerName: "n0", PeerNamespace: netlink.NsFd(int(b))})
	})
	for ns, ip := range map[string]netip.Addr{nsA: ipA, nsB: ipB} {
		Must(t, ns, func() error {
			l, err := netlink.LinkByName("n0")
			if err != nil {
				return err
			}
			if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: ip.AsSlice(), Mask: net.CIDRMask(24, 32)}}); err != nil {
				return err
			}
			return netlink.LinkSetUp(l)
		})
	}
}

// AddAddr adds prefix (an address and its subnet) to the interface
// ifname of the namespace at path, without IPv6 duplicate address
// detection, so that it is usable at once.
func AddAddr(t testing.TB, path, ifname string, prefix netip.Prefix) {
	t.Helper()
	Must(t, path, func() error {
		l, err := netlink.LinkByName(ifname)
		if err != nil {
			return err
		}
		a := &netlink.Addr{IPNet: &net.IPNet{IP: prefix.Addr().AsSlice(), Mask: net.CIDRMask(prefix.Bits(), prefix.Addr().BitLen())}}
		if prefix.Addr().Is6() {
			a.Flags = unix.IFA_F_NODAD
		}
		return netlink.AddrAdd(l, a)
	})
}

// AddRoute routes dst via gw in the namespace at path.
func AddRoute(t testing.TB, path string, dst netip.Prefix, gw netip.Addr) {
	t.Helper()
	Must(t, path, func() error {
		return netlink.RouteAdd(&netlink.Route{
			Dst: &net.IPNet{IP: dst.Addr().AsSlice(), Mask: net.CIDRMask(dst.Bits(), dst.Addr().BitLen())},
			Gw:  gw.AsSlice(),
		})
	})
}
