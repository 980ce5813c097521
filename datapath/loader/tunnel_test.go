package loader_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/datapath/tunnel"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// tunnelNode is one "node" of the tunnel tests: a network namespace on
// the underlay bridge with its own bpffs root, loader, maps, Linux
// datapath and VXLAN device.
type tunnelNode struct {
	ns      string
	root    string
	eps     map[uint16]datapath.EndpointSpec
	ip      netip.Addr
	links   *linux.Datapath
	loader  *loader.Loader
	ipcache *ipcachemap.Map
	events  *eventsmap.Reader
}

// newUnderlay returns a namespace holding bridge br0, the nodes' L2
// network; it has no address and no route.
func newUnderlay(t *testing.T) string {
	ul := netnstest.New(t, "apiary-underlay")
	netnstest.Must(t, ul, func() error {
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
		if err := netlink.LinkAdd(br); err != nil {
			return err
		}
		return netlink.LinkSetUp(br)
	})
	return ul
}

// newTunnelNode plugs a new node namespace into the underlay's bridge as
// ip/24 (interface eth0, no other route), creates its VXLAN device,
// opens a loader on a bpffs of its own and attaches the overlay program.
func newTunnelNode(t *testing.T, ul string, name string, ip netip.Addr) *tunnelNode {
	t.Helper()
	n := &tunnelNode{ns: netnstest.New(t, "apiary-"+name), ip: ip, eps: map[uint16]datapath.EndpointSpec{}}
	nodeNS, err := netnsutil.Open(n.ns)
	if err != nil {
		t.Fatal(err)
	}
	defer nodeNS.Close()
	netnstest.Must(t, ul, func() error {
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "ul-" + name}, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(nodeNS))}
		if err := netlink.LinkAdd(v); err != nil {
			return err
		}
		br, err := netlink.LinkByName("br0")
		if err != nil {
			return err
		}
		l, err := netlink.LinkByName("ul-" + name)
		if err != nil {
			return err
		}
		if err := netlink.LinkSetMaster(l, br); err != nil {
			return err
		}
		return netlink.LinkSetUp(l)
	})
	netnstest.AddAddr(t, n.ns, "eth0", netip.PrefixFrom(ip, 24))
	netnstest.Must(t, n.ns, func() error {
		l, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(l)
	})
	log := celltest.Logger(t)
	if n.links, err = linux.New(n.ns, log); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.links.Close() })
	ifindex, err := n.links.EnsureTunnelDevice(tunnel.DefaultPort)
	if err != nil {
		t.Fatal(err)
	}
	n.root = bpfmaptest.Root(t)
	n.startLoader(t, ifindex)
	if n.ipcache, err = ipcachemap.Open(log, n.root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.ipcache.Close() })
	if n.events, err = eventsmap.Open(log, n.root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.events.Close() })
	return n
}

// startLoader opens a loader on the node's bpffs and attaches the
// overlay programs to the tunnel device, as the loader cell does at start.
func (n *tunnelNode) startLoader(t *testing.T, tunnelIf int) {
	t.Helper()
	l, err := loader.New(celltest.Logger(t), n.root, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	netnstest.Must(t, n.ns, func() error { return l.AttachOverlay(tunnelIf) })
	n.loader = l
}

// restart does what a restarted agent does to the node's datapath: the
// tunnel device is ensured again (kept), a new loader reattaches the
// overlay programs and re-adopts and regenerates the endpoints.
func (n *tunnelNode) restart(t *testing.T) {
	t.Helper()
	before := n.loader.TunnelIfIndex()
	if err := n.loader.Close(); err != nil {
		t.Fatal(err)
	}
	ifindex, err := n.links.EnsureTunnelDevice(tunnel.DefaultPort)
	if err != nil {
		t.Fatal(err)
	}
	if ifindex != before {
		t.Fatalf("restart: tunnel device ifindex %d, was %d", ifindex, before)
	}
	n.startLoader(t, ifindex)
	for id, ep := range n.eps {
		netnstest.Must(t, n.ns, func() error {
			if err := n.loader.Restore(id, ep.IfIndex); err != nil {
				return err
			}
			return n.loader.Attach(ep)
		})
	}
}

// tunnelPod is an endpoint on a tunnel node.
type tunnelPod struct {
	ns       string
	id       uint16
	identity identity.NumericIdentity
	ip       netip.Addr
	ip6      netip.Addr // optional
}

// addPod plumbs a pod namespace with the Linux datapath (MTU under the
// tunnel header), writes its policy map and attaches its programs.
func (n *tunnelNode) addPod(t *testing.T, p *tunnelPod, gw, gw6 netip.Addr, ms policy.MapState) {
	t.Helper()
	p.ns = netnstest.New(t, "apiary-pod")
	spec := datapath.EndpointLinkSpec{ID: datapath.EndpointID(p.id), NetNSPath: p.ns, IfName: "eth0",
		MTU: tunnel.Config{RoutingMode: tunnel.ModeTunnel}.EndpointMTU(), IPv4: p.ip, GatewayIPv4: gw}
	if p.ip6.IsValid() {
		spec.IPv6, spec.GatewayIPv6 = p.ip6, gw6
	}
	l, err := n.links.CreateEndpointLink(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.loader.SyncPolicyMap(p.id, ms); err != nil {
		t.Fatal(err)
	}
	ep := datapath.EndpointSpec{ID: datapath.EndpointID(p.id), Identity: p.identity, IfIndex: l.IfIndex,
		IngressEnforcement: true, EgressEnforcement: true}
	netnstest.Must(t, n.ns, func() error { return n.loader.Attach(ep) })
	n.eps[p.id] = ep
	t.Cleanup(func() { n.loader.Detach(p.id) })
}

// upsert writes ipcache entries; peer (if valid) is their tunnel peer.
func (n *tunnelNode) upsert(t *testing.T, peer netip.Addr, entries map[string]identity.NumericIdentity) {
	t.Helper()
	var ch []datapath.IPCacheMapChange
	for p, id := range entries {
		ch = append(ch, datapath.IPCacheMapChange{Entry: datapath.IPCacheMapEntry{
			Prefix: netip.MustParsePrefix(p), Identity: id, TunnelPeer: peer}})
	}
	if err := n.ipcache.Apply(ch); err != nil {
		t.Fatal(err)
	}
}

// waitTCPDrop reads n's events until the drop of a TCP packet from src
// to port and returns it (the retransmitted SYNs of earlier dials are
// skipped).
func (n *tunnelNode) waitTCPDrop(t *testing.T, src netip.Addr, port uint16) eventsmap.Event {
	t.Helper()
	deadline := time.Now().Add(safety)
	for {
		n.events.SetDeadline(deadline)
		ev, err := n.events.Read()
		if err != nil {
			t.Fatalf("waiting for the drop of TCP to port %d: %v", port, err)
		}
		if ev.Type == eventsmap.TypeDrop && ev.Proto == policy.ProtoTCP && ev.Dst.Port() == port && ev.Src.Addr() == src {
			return ev
		}
	}
}

// TestTunnelBetweenTwoNodes runs real TCP between pods of two nodes that
// share only an L2 underlay with no route for pod CIDRs: pod A (node 1)
// reaches pod B (node 2) over VXLAN, the VNI on the wire carries each
// sender's identity, node 2 enforces B's ingress on A's identity from the
// VNI (its ipcache knows A's address only as node 1's pod CIDR, world),
// so 8080 passes and 9090 is dropped with A's identity in the drop event
// (over IPv4 and, with IPv6 pod addresses, over the same IPv4 underlay),
// replies return through the tunnel, and a pod of node 2 that marks its
// packets with A's identity mark is still seen as itself.
func TestTunnelBetweenTwoNodes(t *testing.T) {
	ul := newUnderlay(t)
	n1 := newTunnelNode(t, ul, "node1", addr("192.168.77.1"))
	n2 := newTunnelNode(t, ul, "node2", addr("192.168.77.2"))
	a := &tunnelPod{id: 11, identity: 3001, ip: addr("10.1.1.10"), ip6: addr("fd00:1:1::10")}
	b := &tunnelPod{id: 21, identity: 3002, ip: addr("10.1.2.20"), ip6: addr("fd00:1:2::20")}
	c := &tunnelPod{id: 22, identity: 3003, ip: addr("10.1.2.30")}

	// Node 1 knows B by its own address; node 2 knows node 1's pods only
	// through node 1's pod CIDR (as world, like Cilium's pod CIDR entries).
	// IPv6 pods go over the same IPv4 underlay.
	n1.upsert(t, netip.Addr{}, map[string]identity.NumericIdentity{"10.1.1.10/32": a.identity, "fd00:1:1::10/128": a.identity,
		"192.168.77.1/32": identity.ReservedHost})
	n1.upsert(t, n2.ip, map[string]identity.NumericIdentity{"10.1.2.20/32": b.identity, "10.1.2.0/24": identity.ReservedWorldIPv4,
		"fd00:1:2::20/128": b.identity})
	n2.upsert(t, netip.Addr{}, map[string]identity.NumericIdentity{"10.1.2.20/32": b.identity, "10.1.2.30/32": c.identity,
		"fd00:1:2::20/128": b.identity})
	n2.upsert(t, n1.ip, map[string]identity.NumericIdentity{"10.1.1.0/24": identity.ReservedWorldIPv4, "fd00:1:1::/64": identity.ReservedWorldIPv6,
		"192.168.77.1/32": identity.ReservedRemoteNode})

	gw1, gw2 := addr("10.1.1.1"), addr("10.1.2.1")
	gw61, gw62 := addr("fd00:1:1::1"), addr("fd00:1:2::1")
	n1.addPod(t, a, gw1, gw61, policy.MapState{key(b.identity, policy.Egress, 0, 0, 0): allow})
	n2.addPod(t, b, gw2, gw62, policy.MapState{
		key(a.identity, policy.Ingress, policy.ProtoTCP, 8080, 16):                  allow,
		key(identity.ReservedWorldIPv4, policy.Ingress, policy.ProtoTCP, 9999, 16):  allow,
		key(identity.ReservedRemoteNode, policy.Ingress, policy.ProtoTCP, 8080, 16): allow,
	})
	n2.addPod(t, c, gw2, gw62, policy.MapState{key(0, policy.Egress, 0, 0, 0): allow})

	// The underlay and the nodes have no route to the other node's pods:
	// only the programs' encapsulation gets packets there.
	netnstest.Must(t, n1.ns, func() error {
		if _, err := netlink.RouteGet(b.ip.AsSlice()); err == nil {
			return fmt.Errorf("node 1 has a route to %s", b.ip)
		}
		return nil
	})

	for _, ip := range []netip.Addr{b.ip, b.ip6} {
		for _, port := range []int{8080, 9090} {
			stop, err := netnstest.Echo(b.ns, ip, port)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
		}
	}
	capture := newVXLANCapture(t, ul, "ul-node1") // a bridge port: both directions

	t.Run("allowed port passes, VNI carries identities", func(t *testing.T) {
		start := time.Now()
		if err := netnstest.Dial(a.ns, b.ip, 8080, safety); err != nil {
			t.Fatal(err)
		}
		t.Logf("dial took %v", time.Since(start))
		seen := capture.vnisUntil(t, map[netip.Addr]uint32{n1.ip: uint32(a.identity), n2.ip: uint32(b.identity)})
		t.Logf("VNIs on the underlay by sending node: %v", seen)
	})

	t.Run("denied port dropped on node 2 with A's identity", func(t *testing.T) {
		if err := netnstest.Dial(a.ns, b.ip, 9090, time.Second); err == nil {
			t.Fatal("dial to 9090 succeeded, want it dropped")
		}
		ev := n2.waitTCPDrop(t, a.ip, 9090)
		if ev.Direction != policy.Ingress || ev.EndpointID != b.id || ev.SrcIdentity != a.identity ||
			ev.DstIdentity != b.identity || ev.Reason != eventsmap.ReasonPolicy || ev.Src.Addr() != a.ip {
			t.Fatalf("drop event %+v, want node 2's ingress drop of B (endpoint %d) with source identity %d (from the VNI)",
				ev, b.id, a.identity)
		}
	})

	t.Run("IPv6 pods over the IPv4 underlay", func(t *testing.T) {
		if err := netnstest.Dial(a.ns, b.ip6, 8080, safety); err != nil {
			t.Fatal(err)
		}
		if err := netnstest.Dial(a.ns, b.ip6, 9090, time.Second); err == nil {
			t.Fatal("dial to [B]:9090 succeeded, want it dropped")
		}
		ev := n2.waitTCPDrop(t, a.ip6, 9090)
		if ev.Direction != policy.Ingress || ev.SrcIdentity != a.identity || ev.Src.Addr() != a.ip6 {
			t.Fatalf("drop event %+v, want B's ingress drop of %s with source identity %d", ev, a.ip6, a.identity)
		}
	})

	t.Run("node 1 itself reaches B through the tunnel as remote-node", func(t *testing.T) {
		if err := n1.links.UpsertNodeRoute(context.Background(), netip.MustParsePrefix("10.1.2.0/24"), n2.ip); err != nil {
			t.Fatal(err)
		}
		capture := newVXLANCapture(t, ul, "ul-node1")
		if err := netnstest.Dial(n1.ns, b.ip, 8080, safety); err != nil {
			t.Fatal(err)
		}
		capture.vnisUntil(t, map[netip.Addr]uint32{n1.ip: uint32(identity.ReservedHost), n2.ip: uint32(b.identity)})
		if err := netnstest.Dial(n1.ns, b.ip, 9090, time.Second); err == nil {
			t.Fatal("dial from node 1 to 9090 succeeded, want it dropped")
		}
		ev := n2.waitTCPDrop(t, n1.ip, 9090)
		if ev.Direction != policy.Ingress || ev.SrcIdentity != identity.ReservedRemoteNode {
			t.Fatalf("drop event %+v, want B's ingress drop with source identity remote-node (the VNI's host)", ev)
		}
	})

	t.Run("restart of node 2's datapath keeps the connection and the deny", func(t *testing.T) {
		c := netnstest.Connect(t, a.ns, b.ip, 8080)
		netnstest.RoundTrip(t, c, "before the restart\n")
		n2.restart(t)
		netnstest.RoundTrip(t, c, "after the restart\n")
		if err := netnstest.Dial(a.ns, b.ip, 9090, time.Second); err == nil {
			t.Fatal("dial to 9090 succeeded after the restart, want it dropped")
		}
		if ev := n2.waitTCPDrop(t, a.ip, 9090); ev.SrcIdentity != a.identity {
			t.Fatalf("drop event %+v after the restart, want source identity %d", ev, a.identity)
		}
	})

	t.Run("a local pod cannot forge the identity mark", func(t *testing.T) {
		mark := identityMark(uint32(a.identity))
		if err := dialWithMark(c.ns, b.ip, 8080, mark, time.Second); err == nil {
			t.Fatal("dial with A's identity mark from C succeeded, want it dropped")
		}
		ev := n2.waitTCPDrop(t, c.ip, 8080)
		if ev.Direction != policy.Ingress || ev.EndpointID != b.id || ev.SrcIdentity != c.identity || ev.Src.Addr() != c.ip {
			t.Fatalf("drop event %+v, want B's ingress drop with C's own identity %d", ev, c.identity)
		}
	})
}

// identityMark is lib/mark.h's identity_mark.
func identityMark(id uint32) int {
	return int((id&0xFFFF)<<16 | 0x0F00 | (id>>16)&0xFF)
}

// dialWithMark connects from the namespace at path to ip:port with
// SO_MARK set to mark on the socket.
func dialWithMark(path string, ip netip.Addr, port, mark int, timeout time.Duration) error {
	var c net.Conn
	err := netnsutil.RunPath(path, func() error {
		d := net.Dialer{Timeout: timeout, Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, mark) }); err != nil {
				return err
			}
			return serr
		}}
		var err error
		c, err = d.Dial("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		return err
	})
	if err != nil {
		return err
	}
	return c.Close()
}

// vxlanCapture reads the frames crossing an interface with an AF_PACKET
// socket.
type vxlanCapture struct{ fd int }

func newVXLANCapture(t *testing.T, ns, ifname string) *vxlanCapture {
	t.Helper()
	c := &vxlanCapture{fd: -1}
	netnstest.Must(t, ns, func() error {
		l, err := netlink.LinkByName(ifname)
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		c.fd = fd
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: l.Attrs().Index})
	})
	t.Cleanup(func() { unix.Close(c.fd) })
	tv := unix.NsecToTimeval(int64(safety))
	if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	return c
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// vnisUntil reads frames until it has seen VXLAN packets from every
// sender of want, and fails if a sender's VNI differs from want's.
func (c *vxlanCapture) vnisUntil(t *testing.T, want map[netip.Addr]uint32) map[netip.Addr]uint32 {
	t.Helper()
	seen := map[netip.Addr]uint32{}
	buf := make([]byte, 2048)
	for len(seen) < len(want) {
		n, _, err := unix.Recvfrom(c.fd, buf, 0)
		if err != nil {
			t.Fatalf("capture VXLAN on the underlay (seen %v, want %v): %v", seen, want, err)
		}
		src, vni, ok := parseVXLAN(buf[:n])
		if !ok {
			continue
		}
		if w, known := want[src]; !known || w != vni {
			t.Fatalf("VXLAN packet from %s with VNI %d, want the sender's identity (%v)", src, vni, want)
		}
		seen[src] = vni
	}
	return seen
}

// parseVXLAN returns the outer source and the VNI of an Ethernet frame
// holding IPv4/UDP to the VXLAN port.
func parseVXLAN(f []byte) (netip.Addr, uint32, bool) {
	if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:14]) != unix.ETH_P_IP {
		return netip.Addr{}, 0, false
	}
	ihl := int(f[14]&0x0f) * 4
	if f[14+9] != unix.IPPROTO_UDP || len(f) < 14+ihl+16 {
		return netip.Addr{}, 0, false
	}
	udp := f[14+ihl:]
	if binary.BigEndian.Uint16(udp[2:4]) != tunnel.DefaultPort {
		return netip.Addr{}, 0, false
	}
	src := netip.AddrFrom4([4]byte(f[14+12 : 14+16]))
	return src, binary.BigEndian.Uint32(udp[12:16]) >> 8, true
}
