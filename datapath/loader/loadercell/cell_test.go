package loadercell_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/policy"
)

// TestCellPinsSharedMaps starts the cell alone on a private bpffs and
// checks the shared maps are pinned, and that a second start reuses them.
func TestCellPinsSharedMaps(t *testing.T) {
	root := bpfmaptest.Root(t)
	var (
		l     *loader.Loader
		limit policy.MapStateLimit
	)
	celltest.StartWithFlags(t, []string{"bpf-root=" + root, "bpf-policy-map-max=64"}, loadercell.Cell,
		celltest.Capture(&l), celltest.Capture(&limit))
	if l.Root() != root {
		t.Errorf("loader root %q, want %q", l.Root(), root)
	}
	for _, name := range []string{"ipcache", "ct4", "ct6", "metrics", "events"} {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("shared map %s not pinned: %v", name, err)
		}
	}
	pm, err := l.PolicyMap(3)
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	if got := pm.EBPF().MaxEntries(); got != 64 {
		t.Errorf("policy map holds %d entries, want --bpf-policy-map-max=64", got)
	}
	if limit != 64 {
		t.Errorf("the cell provides a map state limit of %d, want --bpf-policy-map-max=64", limit)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		give loadercell.Config
		ok   bool
	}{
		{"defaults", loadercell.DefaultConfig, true},
		{"no lb map", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1}, false},
		{"tc mode", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "tc", BPFPolicyMapMax: 1, BPFLBMapMax: 1}, true},
		{"unknown attach mode", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "xdp", BPFPolicyMapMax: 1, BPFLBMapMax: 1}, false},
		{"no policy map", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFLBMapMax: 1}, false},
		{"largest policy map", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1 << 20, BPFLBMapMax: 1 << 24}, true},
		{"lb map too large", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1<<24 + 1}, false},
		{"empty root", loadercell.Config{BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1}, false},
		{"no hairpin", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv4ServiceLoopbackAddress: ""}, true},
		{"other loopback address", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv4ServiceLoopbackAddress: "192.0.2.1"}, true},
		{"loopback address not one", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv4ServiceLoopbackAddress: "169.254.42.300"}, false},
		{"IPv6 loopback address", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv4ServiceLoopbackAddress: "fd00::1"}, false},
		{"multicast loopback address", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv4ServiceLoopbackAddress: "224.0.0.1"}, false},
		{"127/8 loopback address", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv4ServiceLoopbackAddress: "127.0.0.1"}, false},
		{"policy map too large", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1<<20 + 1, BPFLBMapMax: 1}, false},
		{"other IPv6 loopback address", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv6ServiceLoopbackAddress: "fd00:42::1"}, true},
		{"IPv6 loopback address link-local", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv6ServiceLoopbackAddress: "fe80::42"}, false},
		{"IPv6 loopback address IPv4", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv6ServiceLoopbackAddress: "169.254.42.1"}, false},
		{"IPv6 loopback address v4-mapped", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv6ServiceLoopbackAddress: "::ffff:169.254.42.1"}, false},
		{"IPv6 loopback address ::1", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv6ServiceLoopbackAddress: "::1"}, false},
		{"kube-proxy replacement", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, KubeProxyReplacement: "true", CgroupRoot: "/sys/fs/cgroup"}, true},
		{"kube-proxy replacement strict", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, KubeProxyReplacement: "strict", CgroupRoot: "/sys/fs/cgroup"}, true},
		{"kube-proxy replacement without a cgroup", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, KubeProxyReplacement: "true"}, false},
		{"kube-proxy replacement partial", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, KubeProxyReplacement: "partial", CgroupRoot: "/sys/fs/cgroup"}, false},
		{"kube-proxy replacement unknown", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, KubeProxyReplacement: "yes", CgroupRoot: "/sys/fs/cgroup"}, false},
		{"no-backend response drop", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, ServiceNoBackendResponse: "drop"}, true},
		{"no-backend response unknown", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, ServiceNoBackendResponse: "ignore"}, false},
		{"IPv6 loopback address not one", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, IPv6ServiceLoopbackAddress: "100::42::1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.give.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestCellSocketLB starts the cell with --bpf-lb-sock on a cgroup of the
// test's own: the balancer's links are pinned, the bind protection's too
// unless --node-port-bind-protection=false; a start without the flag
// removes them.
func TestCellSocketLB(t *testing.T) {
	root := bpfmaptest.Root(t)
	cg := testCgroup(t)
	flags := []string{"bpf-root=" + root, "bpf-lb-sock=true", "cgroup-root=" + cg}
	var l *loader.Loader
	for _, tt := range []struct {
		flag string
		want int
	}{{"node-port-bind-protection=true", 10}, {"node-port-bind-protection=false", 8}} {
		h := celltest.StartWithFlags(t, append(flags, tt.flag), loadercell.Cell, celltest.Capture(&l))
		pins, _ := filepath.Glob(filepath.Join(root, "links", "sock", "*"))
		if len(pins) != tt.want {
			t.Errorf("--%s: pinned socket balancer links %v, want %d", tt.flag, pins, tt.want)
		}
		if err := h.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	celltest.StartWithFlags(t, []string{"bpf-root=" + root}, loadercell.Cell, celltest.Capture(&l))
	if pins, _ := filepath.Glob(filepath.Join(root, "links", "sock", "*")); len(pins) != 0 {
		t.Errorf("links %v left after a start without --bpf-lb-sock", pins)
	}
	if err := (&loadercell.Config{BPFRoot: root, BPFAttachMode: "auto", BPFPolicyMapMax: 1, BPFLBMapMax: 1, BPFLBSock: true}).Validate(); err == nil {
		t.Error("--bpf-lb-sock without --cgroup-root validated")
	}

	// --bpf-lb-sock-hostns-only: the programs hold the cookie of the
	// node's namespace, --datapath-netns's when set.
	if got := sockCookie(t, root); got != 0 {
		t.Fatalf("links of the last start: %v", got)
	}
	for _, netns := range []string{"", netnstest.New(t, "apiary-socklb")} {
		want, err := netnsutil.CookieAt(netns)
		if err != nil {
			t.Fatal(err)
		}
		flags := append(flags, "bpf-lb-sock-hostns-only=true", "datapath-netns="+netns)
		h := celltest.StartWithFlags(t, flags, loadercell.Cell, linux.Cell, celltest.Capture(&l))
		if got := sockCookie(t, root); got != want || want == 0 {
			t.Errorf("--datapath-netns %q: the programs hold netns cookie %d, want %d", netns, got, want)
		}
		if err := h.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// sockCookie returns the host_netns_cookie of the socket balancer's
// connect4 program pinned under root (0: not attached, or every
// namespace translated).
func sockCookie(t *testing.T, root string) uint64 {
	t.Helper()
	lk, err := link.LoadPinnedLink(filepath.Join(root, "links", "sock", "sock_connect4"), nil)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	info, err := lk.Info()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := ebpf.NewProgramFromID(info.Program)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	pinfo, err := prog.Info()
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := pinfo.MapIDs()
	spec, err := bpf.LoadSock()
	if err != nil {
		t.Fatal(err)
	}
	v := spec.Variables["host_netns_cookie"]
	for _, id := range ids {
		m, err := ebpf.NewMapFromID(id)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		mi, err := m.Info()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(mi.Name, ".rodata") {
			continue
		}
		buf := make([]byte, mi.ValueSize)
		if err := m.Lookup(uint32(0), &buf); err != nil {
			t.Fatal(err)
		}
		return binary.LittleEndian.Uint64(buf[v.Offset:])
	}
	t.Fatal("the connect4 program has no .rodata map")
	return 0
}

func testCgroup(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if _, after, ok := strings.Cut(line, " - "); ok && strings.HasPrefix(after, "cgroup2 ") {
			dir := filepath.Join(strings.Fields(line)[4], fmt.Sprintf("apiary-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
			if err := os.Mkdir(dir, 0o755); err != nil {
				celltest.SkipUnprivileged(t, "cannot create a cgroup: %v", err)
			}
			t.Cleanup(func() { os.Remove(dir) })
			return dir
		}
	}
	celltest.SkipUnprivileged(t, "no cgroup v2 hierarchy is mounted")
	return ""
}

// vethNS returns a network namespace of the test's own, and its path,
// holding a veth pair <name>/<name>p for each of names.
func vethNS(t *testing.T, names ...string) (netns.NsHandle, string) {
	t.Helper()
	ns, err := netnsutil.New()
	if err != nil {
		celltest.SkipUnprivileged(t, "cannot create a network namespace: %v", err)
	}
	t.Cleanup(func() { ns.Close() })
	err = netnsutil.Run(ns, func() error {
		for _, name := range names {
			if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: name + "p"}); err != nil {
				return err
			}
			// Up, as a node's devices are: the kernel gives each its
			// IPv6 link-local address.
			for _, n := range []string{name, name + "p"} {
				if err := setLinkUp(n); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ns, fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), int(ns))
}

func setLinkUp(name string) error {
	lk, err := netlink.LinkByName(name)
	if err != nil {
		return err
	}
	return netlink.LinkSetUp(lk)
}

// TestCellNodePort starts the cell with --enable-node-port on a device of
// a namespace of the test's own: the programs' links are pinned; a start
// without the flag removes them; a device --devices names that is not
// there fails the start, naming it; an entry that cannot be a device
// name stops the agent naming the entry.
func TestCellNodePort(t *testing.T) {
	root := bpfmaptest.Root(t)
	ns, nsPath := vethNS(t, "eth7")
	var l *loader.Loader
	var ld datapath.Loader
	flags := []string{"bpf-root=" + root, "enable-node-port=true", "devices=eth7", "datapath-netns=" + nsPath}
	h := celltest.StartWithFlags(t, flags, loadercell.Cell, linux.Cell, celltest.Capture(&l), celltest.Capture(&ld))
	if pins, _ := filepath.Glob(filepath.Join(root, "links", "netdev", "eth7", "*")); len(pins) != 2 {
		t.Errorf("pinned NodePort links %v, want ingress and egress", pins)
	}
	// A named device made again (a bond or VLAN re-created, a driver
	// reloaded) has the programs on its new index: named devices are
	// followed too.
	runNS(t, ns, func() error {
		lk, err := netlink.LinkByName("eth7")
		if err != nil {
			return err
		}
		if err := netlink.LinkDel(lk); err != nil {
			return err
		}
		if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth7"}, PeerName: "eth7p"}); err != nil {
			return err
		}
		return errors.Join(setLinkUp("eth7"), setLinkUp("eth7p"))
	})
	celltest.Eventually(t, "the programs on eth7 made again", func() bool { return attachedAt(t, ns, "eth7") })
	if err := h.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	celltest.StartWithFlags(t, []string{"bpf-root=" + root, "datapath-netns=" + nsPath}, loadercell.Cell, linux.Cell, celltest.Capture(&ld))
	if pins, _ := filepath.Glob(filepath.Join(root, "links", "netdev", "*")); len(pins) != 0 {
		t.Errorf("links %v left after a start without --enable-node-port", pins)
	}
	h, err := celltest.Populate(t, []string{"bpf-root=" + root, "enable-node-port=true", "devices=eth7,eth9", "datapath-netns=" + nsPath},
		loadercell.Cell, linux.Cell, celltest.Capture(&ld))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "--devices eth9: Link not found") {
		t.Errorf("start with a missing device: %v, want it named", err)
	}
	_, err = celltest.Populate(t, []string{"bpf-root=" + root, "enable-node-port=true", "devices=eth7,eth/8"}, loadercell.Cell, linux.Cell)
	if want := `--devices[1]: "eth/8" is not a device name`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("start with a bad --devices: %v, want %q", err, want)
	}
}

// TestCellLBMapMax: --bpf-lb-map-max sizes the pinned load-balancing
// maps; the endpoint programs load with them, the control plane's writer
// and a reader open them as they are (no re-creation at the default size).
func TestCellLBMapMax(t *testing.T) {
	root := bpfmaptest.Root(t)
	var (
		l   *loader.Loader
		lbw datapath.LBMapWriter
	)
	celltest.StartWithFlags(t, []string{"bpf-root=" + root, "bpf-lb-map-max=1024"}, loadercell.Cell,
		celltest.Capture(&l), celltest.Capture(&lbw))
	fe := datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.10"), Port: 80, Proto: datapath.ProtoTCP}
	be := datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.0.1.2"), Port: 80, Proto: datapath.ProtoTCP}}
	if err := lbw.UpsertService(datapath.LBService{Frontend: fe, Backends: []datapath.LBBackend{be}}); err != nil {
		t.Fatal(err)
	}
	progs, err := l.Load(datapath.EndpointSpec{ID: 3, Identity: 1000})
	if err != nil {
		t.Fatalf("load endpoint programs with sized load-balancing maps: %v", err)
	}
	progs.Close()
	m, err := lbmap.OpenMaps(slog.New(slog.NewTextHandler(io.Discard, nil)), root)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if svcs, err := m.Dump(); err != nil || len(svcs) != 1 {
		t.Errorf("a reader sees %v (%v), want the service written (the map not re-created)", svcs, err)
	}
	for _, name := range lbmap.MapNames {
		pinned, err := ebpf.LoadPinnedMap(filepath.Join(root, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if pinned.MaxEntries() != 1024 {
			t.Errorf("%s holds %d entries, want --bpf-lb-map-max=1024", name, pinned.MaxEntries())
		}
		pinned.Close()
	}
}

// TestCellKubeProxyReplacement starts the cell with Cilium's umbrella
// --kube-proxy-replacement=true and --devices only: the socket-level
// balancer (with its bind protection) and the NodePort programs are
// attached, and the KubeProxyReplacement line says so; without
// --devices the devices are detected: here none is (eth7 is down, and
// has no address), and the line says why.
func TestCellKubeProxyReplacement(t *testing.T) {
	root := bpfmaptest.Root(t)
	cg := testCgroup(t)
	_, nsPath := vethNS(t, "eth7")
	for _, tt := range []struct {
		devices   []string
		sockPins  int
		nodePorts int
		line      string
	}{
		{[]string{"devices=eth7"}, 10, 2, "socket LB on " + cg + " (a sub-group: its processes only), NodePort bind protection, NodePort on eth7 ("},
		{nil, 10, 0, "socket LB on " + cg + " (a sub-group: its processes only), NodePort bind protection, NodePort on no device (none detected: eth7: a veth without a default route; eth7p: a veth without a default route; 1 named as apiary's, other CNIs' and Docker's devices, and lo)]"},
	} {
		flags := append([]string{"bpf-root=" + root, "kube-proxy-replacement=true", "cgroup-root=" + cg, "datapath-netns=" + nsPath}, tt.devices...)
		var col status.Collector
		h := celltest.StartWithFlags(t, flags, loadercell.Cell, linux.Cell, status.Cell, celltest.Capture(&col))
		if pins, _ := filepath.Glob(filepath.Join(root, "links", "sock", "*")); len(pins) != tt.sockPins {
			t.Errorf("%v: socket balancer links %v, want %d", tt.devices, pins, tt.sockPins)
		}
		if pins, _ := filepath.Glob(filepath.Join(root, "links", "netdev", "eth7", "*")); len(pins) != tt.nodePorts {
			t.Errorf("%v: NodePort links %v, want %d", tt.devices, pins, tt.nodePorts)
		}
		if msg := kprLine(col); !strings.Contains(msg, tt.line) {
			t.Errorf("%v: KubeProxyReplacement line %q, want it to hold %q", tt.devices, kprLine(col), tt.line)
		}
		if err := h.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}
