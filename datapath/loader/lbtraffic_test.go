package loader_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// The lab of the real-packet service tests: a node namespace (the test's
// thread) routing between a client endpoint (10.0.0.7, fd00::7, behind
// lxc7 with the endpoint programs) and three backends b1..b3
// (10.1.<i>.2, fd00:1:<i>::2), each in its own namespace with a TCP
// server on 8080 and a UDP server on 5353 answering its name.
const peerCID identity.NumericIdentity = 2003

var (
	vip4 = netip.MustParseAddr("10.96.0.10")
	vip6 = netip.MustParseAddr("fd00:96::10")
)

type lbLab struct {
	h        *harness
	lb       *lbmap.Writer
	clientNS netns.NsHandle
	backends []netns.NsHandle // b1..b3's
	devIf    int              // the node's device facing outside (withOutside)
}

// backendNS returns backend bi's namespace.
func (l *lbLab) backendNS(i int) netns.NsHandle { return l.backends[i-1] }

func backendAddr(i int, v6 bool) netip.Addr {
	if v6 {
		return netip.MustParseAddr(fmt.Sprintf("fd00:1:%d::2", i))
	}
	return netip.MustParseAddr(fmt.Sprintf("10.1.%d.2", i))
}

func backendID(i int) identity.NumericIdentity {
	return []identity.NumericIdentity{peerAID, peerBID, peerCID}[i-1]
}

// newLBLab builds the lab inside the current (fresh) namespace and
// attaches the client endpoint's programs with egress policy ms.
func newLBLab(t *testing.T, ms policy.MapState) *lbLab {
	t.Helper()
	return newLBLabEnforcing(t, ms, false)
}

// newLBLabEnforcing is newLBLab, with the client endpoint's ingress
// policy enforced when ingress is true (its policy map: ms), and the
// loader's options opts.
func newLBLabEnforcing(t *testing.T, ms policy.MapState, ingress bool, opts ...loader.Option) *lbLab {
	t.Helper()
	for _, p := range []string{"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv6/conf/all/forwarding"} {
		if err := os.WriteFile(p, []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := &lbLab{h: newHarness(t, opts...)}
	l.lb = l.h.lbWriter(t)
	hostIf := newVeth(t, "lxc7")
	l.clientNS = newNS(t)
	plumbLink(t, "lxc7", l.clientNS, []string{"10.0.0.1/24", "fd00::1/64"}, []string{"10.0.0.7/24", "fd00::7/64"})
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("b%d", i)
		newVeth(t, name)
		ns := newNS(t)
		plumbLink(t, name, ns, []string{fmt.Sprintf("10.1.%d.1/24", i), fmt.Sprintf("fd00:1:%d::1/64", i)},
			[]string{backendAddr(i, false).String() + "/24", backendAddr(i, true).String() + "/64"})
		serve(t, ns, name)
		l.backends = append(l.backends, ns)
		for _, v6 := range []bool{false, true} {
			if err := l.h.ipcache.Upsert(netip.PrefixFrom(backendAddr(i, v6), backendAddr(i, v6).BitLen()), backendID(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := l.h.loader.SyncPolicyMap(epID, ms); err != nil {
		t.Fatal(err)
	}
	ep := datapath.EndpointSpec{ID: datapath.EndpointID(epID), Identity: epIdentity, IfIndex: hostIf, IngressEnforcement: ingress, EgressEnforcement: true}
	if err := l.h.loader.Attach(ep); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.h.loader.Detach(epID) })
	return l
}

func newNS(t *testing.T) netns.NsHandle {
	t.Helper()
	ns, err := netnsutil.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	return ns
}

// plumbLink moves <name>p into ns, gives both ends their addresses (no IPv6
// duplicate address detection) and routes ns's traffic via the host end.
func plumbLink(t *testing.T, name string, ns netns.NsHandle, hostAddrs, peerAddrs []string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	host, err := netlink.LinkByName(name)
	must(err)
	peer, err := netlink.LinkByName(name + "p")
	must(err)
	must(netlink.LinkSetNsFd(peer, int(ns)))
	for _, a := range hostAddrs {
		addr, err := netlink.ParseAddr(a)
		must(err)
		addr.Flags = unix.IFA_F_NODAD
		must(netlink.AddrAdd(host, addr))
	}
	nh, err := netlink.NewHandleAt(ns)
	must(err)
	defer nh.Close()
	peer, err = nh.LinkByName(name + "p")
	must(err)
	for _, a := range peerAddrs {
		addr, err := netlink.ParseAddr(a)
		must(err)
		addr.Flags = unix.IFA_F_NODAD
		must(nh.AddrAdd(peer, addr))
	}
	must(nh.LinkSetUp(peer))
	for _, gw := range hostAddrs {
		p := netip.MustParsePrefix(gw)
		must(nh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: p.Addr().AsSlice()}))
	}
}

// serve runs, in ns, a TCP server on 8080 that writes name and a newline
// and then echoes lines, and a UDP server on 5353 that answers name; on
// both families.
func serve(t *testing.T, ns netns.NsHandle, name string) {
	t.Helper()
	var (
		tls []net.Listener
		uls []net.PacketConn
	)
	err := netnsutil.Run(ns, func() error {
		for _, fam := range []string{"4", "6"} {
			tl, err := net.Listen("tcp"+fam, ":8080")
			if err != nil {
				return err
			}
			tls = append(tls, tl)
			ul, err := net.ListenPacket("udp"+fam, ":5353")
			if err != nil {
				return err
			}
			uls = append(uls, ul)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		for i := range tls {
			tls[i].Close()
			uls[i].Close()
		}
		wg.Wait()
	})
	for i := range tls {
		wg.Add(2)
		go func() { defer wg.Done(); serveTCP(tls[i], name) }()
		go func() { defer wg.Done(); serveUDP(uls[i], name) }()
	}
}

func serveTCP(l net.Listener, name string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			fmt.Fprintln(c, name)
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				fmt.Fprintln(c, sc.Text())
			}
		}()
	}
}

func serveUDP(c net.PacketConn, name string) {
	buf := make([]byte, 64)
	for {
		_, from, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		c.WriteTo([]byte(name), from)
	}
}

func (l *lbLab) service(t *testing.T, vip netip.Addr, port uint16, proto uint8, bport uint16, backends ...int) {
	t.Helper()
	s := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: vip, Port: port, Proto: proto}, Name: "default/web"}
	for _, i := range backends {
		state := datapath.BackendActive
		if i < 0 {
			i, state = -i, datapath.BackendTerminating
		}
		s.Backends = append(s.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: backendAddr(i, vip.Is6()), Port: bport, Proto: proto}, State: state})
	}
	if err := l.lb.UpsertService(s); err != nil {
		t.Fatal(err)
	}
}

// dial connects from the client to addr (from local port lport when not
// 0); the connection keeps the client's namespace.
func (l *lbLab) dial(ctx context.Context, addr netip.AddrPort, lport uint16) (net.Conn, error) {
	var c net.Conn
	err := netnsutil.Run(l.clientNS, func() error {
		d := net.Dialer{Timeout: safety}
		if lport != 0 {
			d.LocalAddr = &net.TCPAddr{Port: int(lport)}
		}
		var err error
		c, err = d.DialContext(ctx, "tcp", addr.String())
		return err
	})
	return c, err
}

// hello connects to addr and returns the name the backend answers with,
// and the connection (open).
func (l *lbLab) hello(t *testing.T, addr netip.AddrPort) (string, *bufio.Reader, net.Conn) {
	t.Helper()
	c, err := l.dial(context.Background(), addr, 0)
	if err != nil {
		t.Fatalf("connect to %v: %v", addr, err)
	}
	if got := c.RemoteAddr().String(); got != addr.String() {
		t.Fatalf("connected to %s, want %v", got, addr)
	}
	c.SetDeadline(time.Now().Add(safety))
	r := bufio.NewReader(c)
	name, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read the backend's name through %v: %v", addr, err)
	}
	return strings.TrimSpace(name), r, c
}

// names connects n times and counts the backends that answered.
func (l *lbLab) names(t *testing.T, addr netip.AddrPort, n int) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for range n {
		name, _, c := l.hello(t, addr)
		c.Close()
		seen[name]++
	}
	return seen
}

// TestServiceRealTraffic runs TCP connections from a client endpoint to a
// ClusterIP over real veths: they reach all three backends, replies come
// from the ClusterIP (the handshake completes with it), a removed backend
// gets no new connection, a terminating backend keeps its established
// connection, and a deleted backend's connection is reset; over IPv4 and
// IPv6.
func TestServiceRealTraffic(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		name := "IPv4"
		if v6 {
			name = "IPv6"
		}
		t.Run(name, func(t *testing.T) {
			inNewNetns(t, func() {
				l := newLBLab(t, policy.MapState{key(0, policy.Egress, policy.ProtoTCP, 8080, 16): allow})
				vip := vip4
				if v6 {
					vip = vip6
				}
				l.realTraffic(t, netip.AddrPortFrom(vip, 80))
			})
		})
	}
}

func (l *lbLab) realTraffic(t *testing.T, vip netip.AddrPort) {
	l.service(t, vip.Addr(), vip.Port(), datapath.ProtoTCP, 8080, 1, 2, 3)
	if seen := l.names(t, vip, 30); len(seen) != 3 {
		t.Fatalf("30 connections reached %v, want all of b1, b2, b3", seen)
	}
	// An established connection to b1.
	var (
		r    *bufio.Reader
		conn net.Conn
	)
	for name := ""; name != "b1"; {
		if conn != nil {
			conn.Close()
		}
		name, r, conn = l.hello(t, vip)
	}
	defer conn.Close()
	echo := func(msg string) error {
		if _, err := fmt.Fprintln(conn, msg); err != nil {
			return err
		}
		got, err := r.ReadString('\n')
		if err == nil && strings.TrimSpace(got) != msg {
			err = fmt.Errorf("echoed %q", got)
		}
		return err
	}
	// b1 terminating, b3 removed: new connections reach b2 only, b1's
	// established connection goes on.
	l.service(t, vip.Addr(), vip.Port(), datapath.ProtoTCP, 8080, 2, -1)
	if seen := l.names(t, vip, 10); len(seen) != 1 || seen["b2"] != 10 {
		t.Errorf("with b2 the only active backend, connections reached %v", seen)
	}
	if err := echo("still there"); err != nil {
		t.Errorf("established connection to the terminating backend: %v", err)
	}
	// b1 deleted: its connection is balanced again to b2, which resets it.
	l.service(t, vip.Addr(), vip.Port(), datapath.ProtoTCP, 8080, 2)
	err := echo("gone")
	if !errors.Is(err, unix.ECONNRESET) {
		t.Errorf("connection to a deleted backend: %v, want it reset", err)
	}
}

// TestServicePolicyOnBackendIdentity allows the client's egress to b1's
// identity only: connections the service balances to b1 work, those it
// balances to b2 are dropped by policy, as the verdict events say.
func TestServicePolicyOnBackendIdentity(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 8080, 16): allow})
		vip := netip.AddrPortFrom(vip4, 80)
		l.service(t, vip.Addr(), vip.Port(), datapath.ProtoTCP, 8080, 1, 2)
		allowed, denied := 0, 0
		for lport := uint16(43000); allowed == 0 || denied == 0; lport++ {
			if lport == 43040 {
				t.Fatalf("40 connections: %d allowed, %d denied; want both", allowed, denied)
			}
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan error, 1)
			go func() {
				c, err := l.dial(ctx, vip, lport)
				if err == nil {
					c.Close()
				}
				res <- err
			}()
			ev := l.verdict(t, lport)
			if ev.Allowed {
				if ev.DstIdentity != peerAID || ev.Dst.Addr() != backendAddr(1, false) {
					t.Errorf("allowed verdict %+v, want one for b1", ev)
				}
				if err := <-res; err != nil {
					t.Errorf("connection allowed to b1 failed: %v", err)
				}
				allowed++
			} else {
				if ev.DstIdentity != peerBID || ev.Dst.Addr() != backendAddr(2, false) {
					t.Errorf("denied verdict %+v, want one for b2", ev)
				}
				cancel()
				<-res
				denied++
			}
			cancel()
		}
	})
}

// verdict waits for the policy verdict of the TCP flow from lport.
func (l *lbLab) verdict(t *testing.T, lport uint16) eventsmap.Event {
	t.Helper()
	deadline := time.Now().Add(safety)
	for {
		l.h.events.SetDeadline(deadline)
		ev, err := l.h.events.Read()
		if err != nil {
			t.Fatalf("waiting for the verdict of the flow from port %d: %v", lport, err)
		}
		if ev.Type == eventsmap.TypePolicyVerdict && ev.Direction == policy.Egress && ev.Proto == policy.ProtoTCP && ev.Src.Port() == lport {
			return ev
		}
	}
}

// TestServiceRealTrafficUDP sends datagrams from fresh client sockets to a
// UDP ClusterIP: all backends answer, and every answer comes from the
// ClusterIP; a backend's port unreachable reaches the client's socket.
func TestServiceRealTrafficUDP(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, policy.MapState{key(0, policy.Egress, policy.ProtoUDP, 5353, 16): allow, key(0, policy.Egress, policy.ProtoUDP, 5999, 16): allow})
		vip := netip.AddrPortFrom(vip4, 53)
		l.service(t, vip.Addr(), vip.Port(), datapath.ProtoUDP, 5353, 1, 2, 3)
		seen := map[string]int{}
		for range 30 {
			c := listenIn(t, l.clientNS, "10.0.0.7:0")
			send(t, c, vip.String(), "hi")
			c.SetReadDeadline(time.Now().Add(safety))
			buf := make([]byte, 64)
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				t.Fatalf("receive the answer: %v", err)
			}
			if from.String() != vip.String() {
				t.Fatalf("answer from %v, want the ClusterIP %v", from, vip)
			}
			seen[string(buf[:n])]++
			c.Close()
		}
		if len(seen) != 3 {
			t.Errorf("30 datagrams reached %v, want all of b1, b2, b3", seen)
		}
		// A backend port nothing listens on: the backend's ICMP error
		// reaches the client's socket, connected to the ClusterIP, as
		// "connection refused".
		l.service(t, vip.Addr(), 54, datapath.ProtoUDP, 5999, 1)
		var c net.Conn
		err := netnsutil.Run(l.clientNS, func() error {
			var err error
			c, err = net.Dial("udp", netip.AddrPortFrom(vip.Addr(), 54).String())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(safety))
		if _, err := c.Write([]byte("hi")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(make([]byte, 64)); !errors.Is(err, unix.ECONNREFUSED) {
			t.Errorf("read from a ClusterIP whose backend port is closed: %v, want connection refused", err)
		}
	})
}

func netlinkIndex(name string) (int, error) {
	lk, err := netlink.LinkByName(name)
	if err != nil {
		return 0, err
	}
	return lk.Attrs().Index, nil
}
