package loader_test

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
)

// withOutside adds the node's device eth7 (10.2.0.1, fd00:2::1), facing
// an "outside" namespace (10.2.0.2, fd00:2::2, routed via the node),
// with the NodePort programs attached; it returns the namespace.
func (l *lbLab) withOutside(t *testing.T) netns.NsHandle {
	t.Helper()
	l.devIf = newVeth(t, "eth7")
	outside := newNS(t)
	plumbLink(t, "eth7", outside, []string{"10.2.0.1/24", "fd00:2::1/64"}, []string{"10.2.0.2/24", "fd00:2::2/64"})
	if err := l.h.loader.AttachNodePort("eth7", l.devIf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.h.loader.DetachNodePort("eth7"); err != nil {
			t.Error(err)
		}
	})
	return outside
}

// remoteNode adds another node's namespace (10.4.0.2, fd00:4::2), with
// no ipcache entry, behind the link nb, whose NodePort programs see the
// replies of the flows SNATed to its backends; it returns the namespace.
func (l *lbLab) remoteNode(t *testing.T) netns.NsHandle {
	t.Helper()
	nbIf := newVeth(t, "nb")
	nodeB := newNS(t)
	plumbLink(t, "nb", nodeB, []string{"10.4.0.1/24", "fd00:4::1/64"}, []string{"10.4.0.2/24", "fd00:4::2/64"})
	if err := l.h.loader.AttachNodePort("nb", nbIf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.h.loader.DetachNodePort("nb") })
	return nodeB
}

// TestNodePortRealTraffic attaches the NodePort programs to the node's
// device (eth7, facing an "outside" namespace) and connects from outside
// to the node's address and NodePort: the connection reaches the backend
// (in its own namespace behind the node) and the answer comes from the
// node's address and NodePort, also from a backend on another node (which
// the NodePort programs SNAT), over IPv4 and IPv6; a ClusterIP frontend is
// not translated for outside traffic; a pod's hostPort (HostPort) is
// balanced like a NodePort.
func TestNodePortRealTraffic(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, nil)
		outside := l.withOutside(t)
		// A second attach (an agent restart) updates the pinned links.
		if err := l.h.loader.AttachNodePort("eth7", l.devIf); err != nil {
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
		nodeB := l.remoteNode(t)
		serve(t, nodeB, "remote")
		nodePort := func(fe, be string) {
			t.Helper()
			f, b := netip.MustParseAddrPort(fe), netip.MustParseAddrPort(be)
			if err := l.lb.UpsertService(datapath.LBService{
				Frontend: datapath.L3n4Addr{Addr: f.Addr(), Port: f.Port(), Proto: datapath.ProtoTCP}, Type: datapath.SVCTypeNodePort,
				Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: b.Addr(), Port: b.Port(), Proto: datapath.ProtoTCP}}},
			}); err != nil {
				t.Fatal(err)
			}
		}
		nodePort("10.2.0.1:30090", "10.4.0.2:8080")
		nodePort("[fd00:2::1]:30080", "[fd00:1:2::2]:8080")
		nodePort("[fd00:2::1]:30090", "[fd00:4::2]:8080")
		for _, tt := range []struct{ addr, want string }{
			{"10.2.0.1:30090", "remote"}, {"[fd00:2::1]:30080", "b2"}, {"[fd00:2::1]:30090", "remote"},
		} {
			for range 2 {
				c, err := dial(tt.addr)
				if err != nil {
					t.Fatalf("connect from outside to %s: %v", tt.addr, err)
				}
				c.SetDeadline(time.Now().Add(safety))
				name, err := bufio.NewReader(c).ReadString('\n')
				c.Close()
				if err != nil || strings.TrimSpace(name) != tt.want {
					t.Fatalf("NodePort %s answered %q, %v; want %s", tt.addr, name, err, tt.want)
				}
			}
		}

		// A pod's hostPort (the HostPort type: the NodePort and
		// HostPort flags) is balanced like a NodePort.
		if err := l.lb.UpsertService(datapath.LBService{
			Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.2.0.1"), Port: 8081, Proto: datapath.ProtoTCP}, Type: datapath.SVCTypeHostPort,
			Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: backendAddr(3, false), Port: 8080, Proto: datapath.ProtoTCP}}},
		}); err != nil {
			t.Fatal(err)
		}
		c, err := dial("10.2.0.1:8081")
		if err != nil {
			t.Fatalf("connect from outside to the hostPort: %v", err)
		}
		c.SetDeadline(time.Now().Add(safety))
		name, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil || strings.TrimSpace(name) != "b3" {
			t.Fatalf("hostPort answered %q, %v; want b3", name, err)
		}

		// Nothing listens on the node's 30081: a ClusterIP frontend on
		// that address and port is refused, not balanced.
		if c, err := dial("10.2.0.1:30081"); err == nil {
			c.Close()
			t.Error("a ClusterIP frontend was balanced for traffic from outside")
		}
	})
}

// TestExternalClusterIP: with --bpf-lb-external-clusterip, a client
// outside whose route to the service CIDR is the node reaches a
// ClusterIP's backend, over IPv4 and IPv6, and its answer comes from the
// ClusterIP; without it, the same connection reaches nothing.
func TestExternalClusterIP(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("on=%v", on), func(t *testing.T) {
			inNewNetns(t, func() {
				l := newLBLabEnforcing(t, nil, false, loader.WithExternalClusterIP(on))
				outside := l.withOutside(t) // routes everything through the node
				for _, vip := range []netip.Addr{vip4, vip6} {
					l.service(t, vip, 80, datapath.ProtoTCP, 8080, 2)
					// Without the flag nothing answers: a short wait is
					// enough (with it, the first SYN may wait for the
					// interfaces' IPv6 neighbour discovery).
					timeout := safety
					if !on {
						timeout = 2 * time.Second
					}
					var c net.Conn
					err := netnsutil.Run(outside, func() error {
						var err error
						c, err = net.DialTimeout("tcp", netip.AddrPortFrom(vip, 80).String(), timeout)
						return err
					})
					if !on {
						if err == nil {
							c.Close()
							t.Errorf("a ClusterIP %v reached from outside without the flag", vip)
						}
						continue
					}
					if err != nil {
						t.Fatalf("connect from outside to the ClusterIP %v: %v", vip, err)
					}
					c.SetDeadline(time.Now().Add(safety))
					name, err := bufio.NewReader(c).ReadString('\n')
					c.Close()
					if err != nil || strings.TrimSpace(name) != "b2" {
						t.Fatalf("ClusterIP %v answered %q, %v; want b2", vip, name, err)
					}
				}
			})
		})
	}
}
