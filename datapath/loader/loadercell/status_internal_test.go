package loadercell

import (
	"errors"
	"io"
	"log/slog"
	"net/netip"
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
	addrs := &nodePortAddrs{devs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")}}
	if got := kprReport(d, c, addrs); got.State != status.Ok || got.Message != "True [ClusterIP per packet, socket LB on /sys/fs/cgroup, NodePort bind protection, NodePort on eth0, eth1 (192.0.2.10, 2001:db8::10), ClusterIP from outside] (maps not open)" {
		t.Errorf("before start: %+v", got)
	}
	addrs.lastErr = errors.New("--devices eth1: Link not found")
	if got := kprReport(d, c, addrs); got.Message != "True [ClusterIP per packet, socket LB on /sys/fs/cgroup, NodePort bind protection, NodePort on eth0, eth1 (addresses unknown: --devices eth1: Link not found), ClusterIP from outside] (maps not open)" {
		t.Errorf("the devices' addresses unreadable: %+v", got)
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
	if got := kprReport(d, c, addrs); got.Message != "True [ClusterIP per packet, socket LB on /sys/fs/cgroup (host namespace only)] (2 frontends, 2 backends)" {
		t.Errorf("socket LB for the host namespace only: %q", got.Message)
	}
	if got := kprReport(d, Config{}, addrs); got.Message != "True [ClusterIP per packet] (2 frontends, 2 backends)" {
		t.Errorf("with two services sharing two backends: %q", got.Message)
	}
}
