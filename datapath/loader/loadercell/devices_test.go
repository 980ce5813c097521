package loadercell_test

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// detectNS returns a namespace of the test's own (and its path) with:
// eth7, a veth with an address and the default route (a kind node's
// uplink: chosen); ens8, an Ethernet-like (ifb) device with an address
// (chosen); spare0, such a device that is up without an address, and br0, a
// bridge with an address, and lxc9, named as an endpoint's host side
// (none chosen).
func detectNS(t *testing.T) (netns.NsHandle, string) {
	t.Helper()
	ns, path := vethNS(t, "eth7")
	err := netnsutil.Run(ns, func() error {
		for _, l := range []netlink.Link{
			&netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: "ens8"}},
			&netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: "spare0"}},
			&netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: "lxc9"}},
			&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}},
		} {
			if err := netlink.LinkAdd(l); err != nil {
				return err
			}
		}
		for name, a := range map[string]string{"eth7": "10.7.0.2/24", "ens8": "203.0.113.8/24", "br0": "10.9.0.1/24", "lxc9": "10.0.1.9/32"} {
			lk, err := netlink.LinkByName(name)
			if err != nil {
				return err
			}
			if err := addrAdd(lk, a); err != nil {
				return err
			}
		}
		for _, name := range []string{"lo", "eth7", "eth7p", "ens8", "spare0", "lxc9", "br0"} {
			if err := setUp(name, true); err != nil {
				return err
			}
		}
		eth7, err := netlink.LinkByName("eth7")
		if err != nil {
			return err
		}
		return netlink.RouteAdd(&netlink.Route{LinkIndex: eth7.Attrs().Index, Gw: net.ParseIP("10.7.0.1")})
	})
	if err != nil {
		t.Fatal(err)
	}
	return ns, path
}

func setUp(name string, up bool) error {
	lk, err := netlink.LinkByName(name)
	if err != nil {
		return err
	}
	if up {
		return netlink.LinkSetUp(lk)
	}
	return netlink.LinkSetDown(lk)
}

// nodePortDevices returns the devices with pinned NodePort links.
func nodePortDevices(root string) []string {
	var out []string
	dirs, _ := os.ReadDir(filepath.Join(root, "links", "netdev"))
	for _, d := range dirs {
		if pins, _ := filepath.Glob(filepath.Join(root, "links", "netdev", d.Name(), "*")); len(pins) == 2 {
			out = append(out, d.Name())
		}
	}
	return out
}

// attachedAt reports whether device name of ns has a program on its
// tcx ingress hook (at its index now).
func attachedAt(t *testing.T, ns netns.NsHandle, name string) bool {
	t.Helper()
	var n int
	err := netnsutil.Run(ns, func() error {
		lk, err := netlink.LinkByName(name)
		if err != nil {
			return err
		}
		res, err := link.QueryPrograms(link.QueryOptions{Target: lk.Attrs().Index, Attach: ebpf.AttachTCXIngress})
		if err != nil {
			return err
		}
		n = len(res.Programs)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestCellDeviceDetection starts the cell with --enable-node-port and no
// --devices on a namespace of the test's own: the NodePort programs go
// on the devices Cilium's rules choose (an uplink veth with the default
// route, an Ethernet device with an address; not a device without an
// address, a bridge or an endpoint's host side), their addresses are
// the NodePort addresses, and the status line says they were detected.
// Then, while it runs: a device given an address gains the programs, a
// device set down and a device deleted lose them, and a device deleted
// and made again under its name has them on its new index. With
// --devices=!ens8,eth+ the prefix and the exclusion decide, the other
// devices only with --enforce-device-detection.
func TestCellDeviceDetection(t *testing.T) {
	ns, nsPath := detectNS(t)
	root := bpfmaptest.Root(t)
	flags := []string{"bpf-root=" + root, "enable-node-port=true", "datapath-netns=" + nsPath}
	var (
		npa datapath.NodePortAddrs
		col status.Collector
	)
	h := celltest.StartWithFlags(t, flags, loadercell.Cell, linux.Cell, status.Cell, celltest.Capture(&npa), celltest.Capture(&col))
	if got := nodePortDevices(root); !slices.Equal(got, []string{"ens8", "eth7"}) {
		t.Errorf("NodePort programs on %v at start, want ens8 and eth7", got)
	}
	if got, want := npa.Addrs(nil), addrs("10.7.0.2", "203.0.113.8"); !slices.Equal(got, want) {
		t.Errorf("NodePort addresses %v, want %v", got, want)
	}
	line := kprLine(col)
	if !strings.Contains(line, "NodePort on ens8, eth7 (detected) (10.7.0.2, 203.0.113.8)") {
		t.Errorf("KubeProxyReplacement line %q, want the detected devices and their addresses", line)
	}

	inNS(t, ns, "spare0", "198.51.100.4/24", true)
	celltest.Eventually(t, "the programs on spare0 once it has an address", func() bool {
		return slices.Equal(nodePortDevices(root), []string{"ens8", "eth7", "spare0"}) &&
			slices.Equal(npa.Addrs(nil), addrs("10.7.0.2", "198.51.100.4", "203.0.113.8"))
	})
	if !attachedAt(t, ns, "spare0") {
		t.Error("spare0's pinned links attach nothing to it")
	}
	runNS(t, ns, func() error { return setUp("ens8", false) })
	celltest.Eventually(t, "the programs off ens8 once it is down", func() bool {
		return slices.Equal(nodePortDevices(root), []string{"eth7", "spare0"}) && !attachedAt(t, ns, "ens8") &&
			slices.Equal(npa.Addrs(nil), addrs("10.7.0.2", "198.51.100.4"))
	})
	celltest.Eventually(t, "the status line naming the devices now", func() bool {
		return strings.Contains(kprLine(col), "NodePort on eth7, spare0 (detected) (10.7.0.2, 198.51.100.4)")
	})
	// spare0 deleted, then made again: its programs follow it.
	runNS(t, ns, func() error {
		lk, err := netlink.LinkByName("spare0")
		if err != nil {
			return err
		}
		return netlink.LinkDel(lk)
	})
	celltest.Eventually(t, "the programs off spare0 once it is deleted", func() bool {
		return slices.Equal(nodePortDevices(root), []string{"eth7"})
	})
	runNS(t, ns, func() error {
		if err := netlink.LinkAdd(&netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: "spare0"}}); err != nil {
			return err
		}
		return setUp("spare0", true)
	})
	inNS(t, ns, "spare0", "198.51.100.4/24", true)
	celltest.Eventually(t, "the programs on spare0 made again", func() bool {
		return slices.Equal(nodePortDevices(root), []string{"eth7", "spare0"}) && attachedAt(t, ns, "spare0")
	})
	if err := h.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	// A prefix and an exclusion, as Cilium reads them: ens8 (up again)
	// is left out, eth7 and eth7p are taken as matched (up, with an
	// address: eth7p's is its IPv6 link-local one), whatever detection
	// would say of eth7p, and no other device (spare0 does not match).
	runNS(t, ns, func() error { return setUp("ens8", true) })
	h = celltest.StartWithFlags(t, append(flags, "devices=!ens8,eth+"), loadercell.Cell, linux.Cell, status.Cell, celltest.Capture(&col))
	if got := nodePortDevices(root); !slices.Equal(got, []string{"eth7", "eth7p"}) {
		t.Errorf("--devices=!ens8,eth+: NodePort programs on %v, want eth7 and eth7p", got)
	}
	if err := h.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	// With --enforce-device-detection, the devices it does not match are
	// detected: spare0 too.
	celltest.StartWithFlags(t, append(flags, "devices=!ens8,eth+", "enforce-device-detection=true"), loadercell.Cell, linux.Cell, status.Cell,
		celltest.Capture(&col))
	if got := nodePortDevices(root); !slices.Equal(got, []string{"eth7", "eth7p", "spare0"}) {
		t.Errorf("--devices=!ens8,eth+ --enforce-device-detection: NodePort programs on %v, want eth7, eth7p and spare0 (detected)", got)
	}
}

func runNS(t *testing.T, ns netns.NsHandle, fn func() error) {
	t.Helper()
	if err := netnsutil.Run(ns, fn); err != nil {
		t.Fatal(err)
	}
}

// kprLine returns the KubeProxyReplacement status line.
func kprLine(col status.Collector) string {
	for _, e := range col.Status().Entries {
		if e.Name == "KubeProxyReplacement" {
			return e.Message
		}
	}
	return ""
}

// TestCellNodePortRetry: a detected device the programs cannot be
// attached to (here its pin directory is taken by another pin) does not
// stop the agent; the status line says so, and the attachment is tried
// again until it succeeds, with no other change of the devices.
func TestCellNodePortRetry(t *testing.T) {
	t.Cleanup(func() { loadercell.SetNodePortRetry(loadercell.SetNodePortRetry(100 * time.Millisecond)) })
	ns, nsPath := detectNS(t)
	root := bpfmaptest.Root(t)
	dir := filepath.Join(root, "links", "netdev")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	blocker, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	if err := blocker.Pin(filepath.Join(dir, "ens8")); err != nil {
		t.Fatal(err)
	}
	var col status.Collector
	celltest.StartWithFlags(t, []string{"bpf-root=" + root, "enable-node-port=true", "datapath-netns=" + nsPath},
		loadercell.Cell, linux.Cell, status.Cell, celltest.Capture(&col))
	if got := nodePortDevices(root); !slices.Equal(got, []string{"eth7"}) {
		t.Errorf("NodePort programs on %v at start, want eth7 only (ens8's directory is taken)", got)
	}
	celltest.Eventually(t, "a Warning naming ens8", func() bool {
		e := kprEntry(col)
		return e.State == status.Warning && strings.Contains(e.Message, "programs not attached to all") && strings.Contains(e.Message, "ens8")
	})
	if err := blocker.Unpin(); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the programs on ens8 by a retry", func() bool {
		return slices.Equal(nodePortDevices(root), []string{"ens8", "eth7"}) && attachedAt(t, ns, "ens8")
	})
	celltest.Eventually(t, "the status line Ok again", func() bool {
		e := kprEntry(col)
		return e.State == status.Ok && strings.Contains(e.Message, "NodePort on ens8, eth7 (detected)")
	})
}

// kprEntry returns the KubeProxyReplacement status entry.
func kprEntry(col status.Collector) models.StatusEntry {
	for _, e := range col.Status().Entries {
		if e.Name == "KubeProxyReplacement" {
			return e
		}
	}
	return models.StatusEntry{}
}
