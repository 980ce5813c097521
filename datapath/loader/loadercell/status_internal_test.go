package loadercell

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// TestKubeProxyReplacementLine: the status line names the parts in use and
// counts what the maps hold.
func TestKubeProxyReplacementLine(t *testing.T) {
	d := &Datapath{}
	c := Config{BPFLBSock: true, CgroupRoot: "/sys/fs/cgroup", NodePortBindProtection: true, EnableNodePort: true, Devices: []string{"eth0", "eth1"},
		BPFLBExternalClusterIP: true}
	devs := &devices{filter: deviceFilter{"eth0", "eth1"}, chosen: []netDevice{{"eth0", 2}, {"eth1", 3}}}
	addrs := &nodePortAddrs{devs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")}}
	if got := kprReport(d, c, devs, addrs); got.State != status.Ok || got.Message != "True [ClusterIP per packet, socket LB on /sys/fs/cgroup, NodePort bind protection, NodePort on eth0, eth1 (matching --devices=eth0,eth1) (192.0.2.10, 2001:db8::10), ClusterIP from outside] (maps not open)" {
		t.Errorf("before start: %+v", got)
	}
	addrs.lastErr = errors.New("device eth1: Link not found")
	if got := kprReport(d, c, devs, addrs); got.Message != "True [ClusterIP per packet, socket LB on /sys/fs/cgroup, NodePort bind protection, NodePort on eth0, eth1 (matching --devices=eth0,eth1) (addresses unknown: device eth1: Link not found), ClusterIP from outside] (maps not open)" {
		t.Errorf("the devices' addresses unreadable: %+v", got)
	}
	addrs.lastErr = nil
	c.Devices = nil
	devs = &devices{chosen: []netDevice{{"ens5", 2}}, why: map[string]string{"lo": "named lo*"}}
	if got := kprReport(d, c, devs, addrs); got.Message != "True [ClusterIP per packet, socket LB on /sys/fs/cgroup, NodePort bind protection, NodePort on ens5 (detected) (192.0.2.10, 2001:db8::10), ClusterIP from outside] (maps not open)" {
		t.Errorf("a detected device: %+v", got)
	}
	// Matched by --devices, not detected: the line says which entries.
	matched := &devices{filter: deviceFilter{"!eth1", "eth+"}, chosen: []netDevice{{"eth0", 2}}}
	if got := kprReport(d, c, matched, addrs); !strings.Contains(got.Message, "NodePort on eth0 (matching --devices=!eth1,eth+) (192.0.2.10") {
		t.Errorf("a matched device: %+v", got)
	}
	matched.enforce = true
	if got := kprReport(d, c, matched, addrs); !strings.Contains(got.Message, "NodePort on eth0 (matching --devices=!eth1,eth+, and detected)") {
		t.Errorf("a matched device with --enforce-device-detection: %+v", got)
	}
	d.nodePortErr = errors.New("attach NodePort programs to ens5: file exists")
	if got := kprReport(d, c, devs, addrs); got.State != status.Warning ||
		!strings.Contains(got.Message, "NodePort on ens5 (detected) (192.0.2.10, 2001:db8::10) (programs not attached to all: attach NodePort programs to ens5: file exists)") {
		t.Errorf("an attachment failed: %+v", got)
	}
	d.nodePortErr = nil
	devs.chosen = nil
	devs.why["ens5"] = "down"
	if got := kprReport(d, c, devs, addrs); got.State != status.Warning ||
		!strings.Contains(got.Message, "NodePort on no device (none detected: ens5: down; 1 named as apiary's, other CNIs' and Docker's devices, and lo)") {
		t.Errorf("no device detected: %+v", got)
	}
	// A node of many pods: their devices counted, at most maxReasons
	// others named.
	for i := range 100 {
		devs.why[fmt.Sprintf("lxc%d", i)] = "named lxc*"
	}
	for i := range 10 {
		devs.why[fmt.Sprintf("veth%d", i)] = "a veth without a default route"
	}
	if got := kprReport(d, c, devs, addrs); !strings.Contains(got.Message,
		"(none detected: ens5: down; veth0: a veth without a default route; veth1: a veth without a default route; veth2: a veth without a default route; "+
			"veth3: a veth without a default route; veth4: a veth without a default route; veth5: a veth without a default route; "+
			"veth6: a veth without a default route; 3 more; 101 named as apiary's, other CNIs' and Docker's devices, and lo)") {
		t.Errorf("many devices: %+v", got)
	}
	for n := range devs.why {
		if n != "ens5" && n != "lo" {
			delete(devs.why, n)
		}
	}
	devs.lastErr = errors.New("list devices: permission denied")
	devs.chosen = []netDevice{{"ens5", 2}}
	if got := kprReport(d, c, devs, addrs); !strings.Contains(got.Message, "NodePort on ens5 (detected; detecting again failed: list devices: permission denied) (192.0.2.10, 2001:db8::10)") {
		t.Errorf("detection failed after a choice: %+v", got)
	}
	devs.chosen = nil
	if got := kprReport(d, c, devs, addrs); !strings.Contains(got.Message, "NodePort on no device: detection failed: list devices: permission denied") {
		t.Errorf("detection failed: %+v", got)
	}
	w, err := lbmap.OpenWriter(slog.New(slog.NewTextHandler(io.Discard, nil)), bpfmaptest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	d.lb = w
	be := func(s string) datapath.LBBackend {
		return datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr(s), Port: 80, Proto: datapath.ProtoTCP}}
	}
	for _, fe := range []string{"10.96.0.10", "10.96.0.11"} {
		if err := w.UpsertService(datapath.LBService{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr(fe), Port: 80, Proto: datapath.ProtoTCP},
			Backends: []datapath.LBBackend{be("10.0.1.1"), be("10.0.1.2")}}); err != nil {
			t.Fatal(err)
		}
	}
	c.BPFLBSockHostnsOnly, c.EnableNodePort, c.NodePortBindProtection = true, false, false
	if got := kprReport(d, c, devs, addrs); got.Message != "True [ClusterIP per packet, socket LB on /sys/fs/cgroup (host namespace only)] (2 frontends, 2 backends)" {
		t.Errorf("socket LB for the host namespace only: %q", got.Message)
	}
	sub := t.TempDir() // a cgroup v2 group other than the root has cgroup.type
	if err := os.WriteFile(filepath.Join(sub, "cgroup.type"), []byte("domain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := kprReport(d, Config{BPFLBSock: true, CgroupRoot: sub, BPFLBSockHostnsOnly: true}, devs, addrs); !strings.Contains(got.Message,
		"socket LB on "+sub+" (a sub-group: its processes only; host namespace only)]") {
		t.Errorf("socket LB on a sub-group: %q", got.Message)
	}
	if got := kprReport(d, Config{}, devs, addrs); got.Message != "True [ClusterIP per packet] (2 frontends, 2 backends)" {
		t.Errorf("with two services sharing two backends: %q", got.Message)
	}
}
