package loader_test

import (
	"bufio"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// TestNodePortRealTraffic attaches the NodePort programs to the node's
// device (eth7, facing an "outside" namespace) and connects from outside
// to the node's address and NodePort: the connection reaches the backend
// (in its own namespace behind the node) and the answer comes from the
// node's address and NodePort, also from a backend on another node (which
// the NodePort programs SNAT); a ClusterIP frontend is not translated for
// outside traffic.
func TestNodePortRealTraffic(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, nil)
		devIf := newVeth(t, "eth7")
		outside := newNS(t)
		plumbLink(t, "eth7", outside, []string{"10.2.0.1/24"}, []string{"10.2.0.2/24"})
		dev, err := netlink.LinkByIndex(devIf)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.h.loader.AttachNodePort(dev.Attrs().Name, devIf); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := l.h.loader.DetachNodePort("eth7"); err != nil {
				t.Error(err)
			}
		})
		// A second attach (an agent restart) updates the pinned links.
		if err := l.h.loader.AttachNodePort("eth7", devIf); err != nil {
			t.Fatalf("attach again: %v", err)
		}
		np := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.2.0.1"), Port: 30080, Proto: datapath.ProtoTCP},
			Type:     datapath.SVCTypeNodePort,
			Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: backendAddr(2, false), Port: 8080, Proto: datapath.ProtoTCP}}}}
		if err := l.lb.UpsertService(np); err != nil {
			t.Fatal(err)
		}
		cip := np
		cip.Frontend.Port, cip.Type = 30081, datapath.SVCTypeClusterIP
		if err := l.lb.UpsertService(cip); err != nil {
			t.Fatal(err)
		}
		dial := func(addr string) (net.Conn, error) {
			var c net.Conn
			err := netnsutil.Run(outside, func() error {
				var err error
				c, err = net.DialTimeout("tcp", addr, safety)
				return err
			})
			return c, err
		}
		for range 3 {
			c, err := dial("10.2.0.1:30080")
			if err != nil {
				t.Fatalf("connect from outside to the NodePort: %v", err)
			}
			c.SetDeadline(time.Now().Add(safety))
			name, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err != nil || strings.TrimSpace(name) != "b2" {
				t.Fatalf("NodePort answered %q, %v; want b2", name, err)
			}
		}
		// A backend on another node (no ipcache entry of this node's: in
		// node B's namespace, behind the link nb, whose NodePort programs
		// see the replies): translated and SNATed to the node's address,
		// so that its replies come back through this node.
		nbIf := newVeth(t, "nb")
		nodeB := newNS(t)
		plumbLink(t, "nb", nodeB, []string{"10.4.0.1/24"}, []string{"10.4.0.2/24"})
		serve(t, nodeB, "remote")
		if err := l.h.loader.AttachNodePort("nb", nbIf); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.h.loader.DetachNodePort("nb") })
		remote := np
		remote.Frontend.Port = 30090
		remote.Backends = []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.4.0.2"), Port: 8080, Proto: datapath.ProtoTCP}}}
		if err := l.lb.UpsertService(remote); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			c, err := dial("10.2.0.1:30090")
			if err != nil {
				t.Fatalf("connect from outside to a NodePort with a remote backend: %v", err)
			}
			c.SetDeadline(time.Now().Add(safety))
			name, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err != nil || strings.TrimSpace(name) != "remote" {
				t.Fatalf("NodePort with a remote backend answered %q, %v; want remote", name, err)
			}
		}

		// Nothing listens on the node's 30081: a ClusterIP frontend on
		// that address and port is refused, not balanced.
		if c, err := dial("10.2.0.1:30081"); err == nil {
			c.Close()
			t.Error("a ClusterIP frontend was balanced for traffic from outside")
		}
	})
}
