package loadercell_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/tunnel"
)

// TestTunnelModeStartsAndLeaves starts the routing, Linux and loader
// cells in tunnel mode: the VXLAN device exists in --datapath-netns, the
// overlay program's link is pinned and endpoint programs get the
// device's ifindex; a restart keeps the device; a start in native mode
// removes both.
func TestTunnelModeStartsAndLeaves(t *testing.T) {
	root := bpfmaptest.Root(t)
	nodeNS := netnstest.New(t, "apiary-node")
	start := func(mode string) (*loader.Loader, func()) {
		var (
			l  *loader.Loader
			dp datapath.Loader // as the endpoint manager's: builds the adapter
		)
		h := celltest.New(t, []string{"bpf-root=" + root, "datapath-netns=" + nodeNS, "routing-mode=" + mode},
			tunnel.Cell, linux.Cell, loadercell.Cell, celltest.Capture(&l), celltest.Capture(&dp))
		if err := h.Start(context.Background()); err != nil {
			t.Fatalf("start in %s mode: %v", mode, err)
		}
		return l, func() {
			if err := h.Stop(context.Background()); err != nil {
				t.Errorf("stop: %v", err)
			}
		}
	}
	device := func() int {
		idx := 0
		netnstest.Must(t, nodeNS, func() error {
			if l, err := netlink.LinkByName(tunnel.DeviceName); err == nil {
				idx = l.Attrs().Index
			}
			return nil
		})
		return idx
	}
	pin := filepath.Join(root, "links", "overlay", "ingress")

	l, stop := start(tunnel.ModeTunnel)
	first := device()
	if first == 0 || l.TunnelIfIndex() != first {
		t.Fatalf("tunnel mode: device ifindex %d, loader's tunnel ifindex %d, want the same, non-zero", first, l.TunnelIfIndex())
	}
	if _, err := os.Stat(pin); err != nil {
		t.Fatalf("overlay link not pinned: %v", err)
	}
	stop()

	l, stop = start(tunnel.ModeTunnel)
	if got := device(); got != first || l.TunnelIfIndex() != first {
		t.Fatalf("restart: device ifindex %d, loader's %d, want the kept device's %d", got, l.TunnelIfIndex(), first)
	}
	stop()

	l, stop = start(tunnel.ModeNative)
	defer stop()
	if got := device(); got != 0 || l.TunnelIfIndex() != 0 {
		t.Fatalf("native mode: device ifindex %d, loader's %d, want none", got, l.TunnelIfIndex())
	}
	if _, err := os.Stat(pin); !os.IsNotExist(err) {
		t.Fatalf("native mode: overlay link pin still there (%v)", err)
	}
}
