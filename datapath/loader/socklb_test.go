package loader_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
)

// sockClientEnv names the client the test binary runs as: "tcp <addr>" or
// "udp <addr>". It prints the answer and the peer the socket reports.
// With sockNetnsEnv set it first enters the network namespace of its
// file descriptor 3 (a pod's).
const (
	sockClientEnv = "APIARY_TEST_SOCKLB_CLIENT"
	sockNetnsEnv  = "APIARY_TEST_SOCKLB_NETNS"
)

func sockClient(spec string) int {
	if os.Getenv(sockNetnsEnv) != "" {
		runtime.LockOSThread() // the dial's socket is made on this thread
		if err := unix.Setns(3, unix.CLONE_NEWNET); err != nil {
			fmt.Fprintln(os.Stderr, "enter the pod's network namespace:", err)
			return 1
		}
	}
	network, addr, _ := strings.Cut(spec, " ")
	if n, ok := strings.CutPrefix(network, "hold"); ok {
		return holdClient(n, addr)
	}
	if n, ok := strings.CutPrefix(network, "bind"); ok {
		return bindClient(n, addr)
	}
	if strings.HasSuffix(network, "4in6") {
		return mappedClient(strings.TrimSuffix(network, "4in6"), addr)
	}
	c, err := net.DialTimeout(network, addr, safety)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(safety))
	var answer string
	if network == "tcp" {
		answer, err = bufio.NewReader(c).ReadString('\n')
	} else {
		// An unconnected socket, so that sendmsg and recvmsg run.
		uc, lerr := net.ListenPacket("udp", ":0")
		if lerr != nil {
			fmt.Fprintln(os.Stderr, lerr)
			return 1
		}
		defer uc.Close()
		uc.SetDeadline(time.Now().Add(safety))
		to, _ := net.ResolveUDPAddr("udp", addr)
		if _, err = uc.WriteTo([]byte("hi"), to); err == nil {
			buf := make([]byte, 64)
			var n int
			var from net.Addr
			n, from, err = uc.ReadFrom(buf)
			answer = string(buf[:n]) + " from " + from.String()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%s peer %s\n", strings.TrimSpace(answer), c.RemoteAddr())
	return 0
}

// bindClient binds a socket of network ("tcp", "tcp4", "udp", ...) to
// addr and prints "bound".
func bindClient(network, addr string) int {
	var err error
	if strings.HasPrefix(network, "tcp") {
		var l net.Listener
		if l, err = net.Listen(network, addr); err == nil {
			l.Close()
		}
	} else {
		var c net.PacketConn
		if c, err = net.ListenPacket(network, addr); err == nil {
			c.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("bound")
	return 0
}

// holdClient connects to addr ("tcp": reads the greeting; "udp": sends
// a datagram and reads the answer), prints "connected <answer>", then
// waits on the socket until it fails and prints "closed: <error>".
func holdClient(network, addr string) int {
	c, err := net.DialTimeout(network, addr, safety)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	if network == "udp" {
		if _, err := c.Write([]byte("hi")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	c.SetReadDeadline(time.Now().Add(safety))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("connected %s\n", strings.TrimSpace(string(buf[:n])))
	c.SetReadDeadline(time.Now().Add(time.Minute))
	_, err = c.Read(buf)
	fmt.Printf("closed: %v\n", err)
	return 0
}

// clientCmd is the test binary run as the client of spec in cgroup dir
// ("": the test's) and network namespace ns (-1: the test's); done
// closes the descriptors it hands over, once the client started.
func clientCmd(t *testing.T, dir string, ns netns.NsHandle, spec string) (cmd *exec.Cmd, done func()) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), sockClientEnv+"="+spec)
	var files []*os.File
	done = func() {
		for _, f := range files {
			f.Close()
		}
	}
	if ns >= 0 {
		// A copy of the handle: the *os.File closes its descriptor when
		// collected, which must not be the handle's.
		fd, err := unix.Dup(int(ns))
		if err != nil {
			t.Fatal(err)
		}
		f := os.NewFile(uintptr(fd), "netns")
		files = append(files, f)
		cmd.Env = append(cmd.Env, sockNetnsEnv+"=1")
		cmd.ExtraFiles = []*os.File{f}
	}
	if dir != "" {
		f, err := os.Open(dir)
		if err != nil {
			done()
			t.Fatal(err)
		}
		files = append(files, f)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(f.Fd())}
	}
	return cmd, done
}

// mappedClient is sockClient on an IPv6 socket to the IPv4-mapped
// address of addr (a dual-stack socket's IPv4 peer, as Java opens
// them): "tcp" connects, "udp" sends one unconnected datagram. It
// prints the answer, the datagram's source (udp) and the peer name.
func mappedClient(network, addr string) int {
	ap := netip.MustParseAddrPort(addr)
	to := &unix.SockaddrInet6{Port: int(ap.Port()), Addr: netip.AddrFrom16(ap.Addr().As16()).As16()}
	typ := unix.SOCK_STREAM
	if network == "udp" {
		typ = unix.SOCK_DGRAM
	}
	fail := func(what string, err error) int {
		fmt.Fprintln(os.Stderr, what+":", err)
		return 1
	}
	fd, err := unix.Socket(unix.AF_INET6, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail("socket", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0); err != nil {
		return fail("dual stack", err)
	}
	tv := unix.NsecToTimeval(int64(safety))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail("timeout", err)
	}
	name := func(sa unix.Sockaddr) string {
		if s6, ok := sa.(*unix.SockaddrInet6); ok {
			return netip.AddrPortFrom(netip.AddrFrom16(s6.Addr), uint16(s6.Port)).String()
		}
		return fmt.Sprintf("%T", sa)
	}
	buf := make([]byte, 64)
	var answer string
	if network == "udp" {
		if err := unix.Sendto(fd, []byte("hi"), 0, to); err != nil {
			return fail("sendto", err)
		}
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return fail("recvfrom", err)
		}
		fmt.Printf("%s from %s\n", strings.TrimSpace(string(buf[:n])), name(from))
		return 0
	}
	if err := unix.Connect(fd, to); err != nil {
		return fail("connect", err)
	}
	n, err := unix.Read(fd, buf)
	if err != nil {
		return fail("read", err)
	}
	answer, _, _ = strings.Cut(string(buf[:n]), "\n")
	peer, err := unix.Getpeername(fd)
	if err != nil {
		return fail("getpeername", err)
	}
	fmt.Printf("%s peer %s\n", answer, name(peer))
	return 0
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted.
func cgroup2Mount(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if _, after, ok := strings.Cut(line, " - "); ok && strings.HasPrefix(after, "cgroup2 ") {
			return strings.Fields(line)[4]
		}
	}
	celltest.SkipUnprivileged(t, "no cgroup v2 hierarchy is mounted")
	return ""
}

// testCgroup creates a cgroup of the test's own under the cgroup v2
// mount (never attaching to the machine's root cgroup).
func testCgroup(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(cgroup2Mount(t), fmt.Sprintf("apiary-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		celltest.SkipUnprivileged(t, "cannot create a cgroup: %v", err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	return dir
}

// runClient runs the client in cgroup dir ("" : the test's own cgroup)
// and returns its output.
func runClient(t *testing.T, dir, spec string) (string, error) {
	t.Helper()
	return runClientIn(t, dir, -1, spec)
}

// runClientIn is runClient in network namespace ns (-1: the test's).
func runClientIn(t *testing.T, dir string, ns netns.NsHandle, spec string) (string, error) {
	t.Helper()
	cmd, done := clientCmd(t, dir, ns, spec)
	defer done()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s", err, errOut.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// nodeCookie is the cookie of the test's network namespace.
func nodeCookie(t *testing.T) uint64 {
	t.Helper()
	c, err := netnsutil.Cookie()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSocketLB attaches the socket-level balancer to a test cgroup and
// runs a process of the host namespace in it: its TCP connection and
// its UDP datagram to a ClusterIP reach the backend, and the socket
// names the ClusterIP as its peer and as the datagram's source; with
// session affinity every connection goes to the first one's backend; a
// process outside the cgroup reaches nothing there. A process of
// another namespace (a pod's) is translated too, unless the balancer
// is limited to the node's namespace (--bpf-lb-sock-hostns-only): its
// connection then reaches the ClusterIP itself, the node's still the
// backend.
func TestSocketLB(t *testing.T) {
	inNewNetns(t, func() {
		h := newHarness(t)
		lb := h.lbWriter(t)
		newVeth(t, "b1")
		ns := newNS(t)
		plumbLink(t, "b1", ns, []string{"10.1.1.1/24", "fd00:1:1::1/64"}, []string{"10.1.1.2/24", "fd00:1:1::2/64"})
		serve(t, ns, "b1")
		newVeth(t, "b2")
		ns2 := newNS(t)
		plumbLink(t, "b2", ns2, []string{"10.1.2.1/24"}, []string{"10.1.2.2/24"})
		serve(t, ns2, "b2")
		for _, s := range []struct {
			vip, backend string
			proto        uint8
		}{
			{"10.96.0.10:80", "10.1.1.2:8080", datapath.ProtoTCP},
			{"10.96.0.10:53", "10.1.1.2:5353", datapath.ProtoUDP},
			{"[fd00:96::10]:80", "[fd00:1:1::2]:8080", datapath.ProtoTCP},
		} {
			fe, be := netip.MustParseAddrPort(s.vip), netip.MustParseAddrPort(s.backend)
			if err := lb.UpsertService(datapath.LBService{
				Frontend: datapath.L3n4Addr{Addr: fe.Addr(), Port: fe.Port(), Proto: s.proto},
				Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: be.Addr(), Port: be.Port(), Proto: s.proto}}},
			}); err != nil {
				t.Fatal(err)
			}
		}
		sticky := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.11"), Port: 80, Proto: datapath.ProtoTCP},
			SessionAffinityTimeout: time.Hour}
		for _, b := range []string{"10.1.1.2", "10.1.2.2"} {
			sticky.Backends = append(sticky.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr(b), Port: 8080, Proto: datapath.ProtoTCP}})
		}
		if err := lb.UpsertService(sticky); err != nil {
			t.Fatal(err)
		}
		// Two scopes: the node's processes are inside the cluster, so
		// they get the internal entry's backend (b1), not the external
		// one's (b2).
		two := func(scope uint8, backend string) datapath.LBService {
			return datapath.LBService{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.12"), Port: 80, Proto: datapath.ProtoTCP, Scope: scope},
				Type: datapath.SVCTypeLoadBalancer, TwoScopes: scope == datapath.ScopeExternal, LocalOnly: scope == datapath.ScopeExternal,
				Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr(backend), Port: 8080, Proto: datapath.ProtoTCP}}}}
		}
		for _, s := range []datapath.LBService{two(datapath.ScopeExternal, "10.1.2.2"), two(datapath.ScopeInternal, "10.1.1.2")} {
			if err := lb.UpsertService(s); err != nil {
				t.Fatal(err)
			}
		}
		cg := testCgroup(t)
		if err := h.loader.AttachSockLB(cg, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := h.loader.DetachSockLB(); err != nil {
				t.Error(err)
			}
		})
		// A second attach (an agent restart) updates the pinned links.
		if err := h.loader.AttachSockLB(cg, 0); err != nil {
			t.Fatalf("attach again: %v", err)
		}
		for _, tt := range []struct{ spec, want string }{
			{"tcp 10.96.0.10:80", "b1 peer 10.96.0.10:80"},
			{"tcp [fd00:96::10]:80", "b1 peer [fd00:96::10]:80"},
			{"udp 10.96.0.10:53", "b1 from 10.96.0.10:53 peer 10.96.0.10:53"},
			{"tcp 10.96.0.12:80", "b1 peer 10.96.0.12:80"},
			// IPv4 services through dual-stack IPv6 sockets.
			{"tcp4in6 10.96.0.10:80", "b1 peer [::ffff:10.96.0.10]:80"},
			{"udp4in6 10.96.0.10:53", "b1 from [::ffff:10.96.0.10]:53"},
		} {
			got, err := runClient(t, cg, tt.spec)
			if err != nil || got != tt.want {
				t.Errorf("client %q in the cgroup: %q, %v; want %q", tt.spec, got, err, tt.want)
			}
		}
		// Session affinity: every connection of the namespace goes to the
		// backend of its first.
		first, err := runClient(t, cg, "tcp 10.96.0.11:80")
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if got, err := runClient(t, cg, "tcp 10.96.0.11:80"); err != nil || got != first {
				t.Fatalf("with session affinity a connection got %q (%v), the first %q", got, err, first)
			}
		}
		if got, err := runClient(t, "", "tcp 10.96.0.10:80"); err == nil {
			t.Errorf("a client outside the cgroup reached %q through the ClusterIP", got)
		}
		// --node-port-bind-protection: the node's processes cannot bind
		// a NodePort's port on the unspecified, a loopback or the
		// frontend's own address (a dual-stack socket included); other
		// ports, and a ClusterIP's, can, and so can a pod's process.
		if err := h.loader.AttachBindProtection(cg, nodeCookie(t)); err != nil {
			t.Fatal(err)
		}
		if lo, err := netlink.LinkByName("lo"); err != nil || netlink.LinkSetUp(lo) != nil {
			t.Fatalf("lo up: %v", err)
		}
		for _, s := range []datapath.LBService{
			{Frontend: datapath.L3n4Addr{Addr: netip.IPv4Unspecified(), Port: 30088, Proto: datapath.ProtoTCP}, Type: datapath.SVCTypeNodePort},
			{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.1.1.1"), Port: 30088, Proto: datapath.ProtoTCP}, Type: datapath.SVCTypeNodePort},
			{Frontend: datapath.L3n4Addr{Addr: netip.IPv4Unspecified(), Port: 30053, Proto: datapath.ProtoUDP}, Type: datapath.SVCTypeNodePort},
		} {
			s.Backends = []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.1.1.2"), Port: 8080, Proto: s.Frontend.Proto}}}
			if err := lb.UpsertService(s); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range []struct {
			spec  string
			bound bool
		}{
			{"bindtcp4 :30088", false}, {"bindtcp :30088", false}, {"bindtcp4 127.0.0.1:30088", false},
			{"bindtcp4 10.1.1.1:30088", false}, {"bindudp4 :30053", false},
			{"bindtcp4 :30089", true}, {"bindtcp4 :80", true}, {"bindudp4 :30088", true},
		} {
			got, err := runClient(t, cg, tt.spec)
			switch {
			case tt.bound && (err != nil || got != "bound"):
				t.Errorf("%q: %q, %v; want bound", tt.spec, got, err)
			case !tt.bound && (err == nil || !strings.Contains(err.Error(), "address already in use")):
				t.Errorf("%q: %q, %v; want address already in use", tt.spec, got, err)
			}
		}
		if got, err := runClient(t, "", "bindtcp4 :30088"); err != nil || got != "bound" {
			t.Errorf("a process outside the cgroup: %q, %v; want bound", got, err)
		}
		// The NodePort reached on a loopback address (Cilium's wildcard
		// lookup) and on the node's own.
		for _, tt := range []struct{ spec, want string }{
			{"tcp 127.0.0.1:30088", "b1 peer 127.0.0.1:30088"},
			{"tcp 127.0.0.2:30088", "b1 peer 127.0.0.2:30088"},
			{"tcp 10.1.1.1:30088", "b1 peer 10.1.1.1:30088"},
		} {
			if got, err := runClient(t, cg, tt.spec); err != nil || got != tt.want {
				t.Errorf("client %q in the cgroup: %q, %v; want %q", tt.spec, got, err, tt.want)
			}
		}

		// A service without backends refuses the connect and the
		// datagram, as kube-proxy's REJECT (--service-no-backend-response).
		if err := lb.UpsertService(datapath.LBService{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.13"), Port: 80, Proto: datapath.ProtoTCP}}); err != nil {
			t.Fatal(err)
		}
		if err := lb.UpsertService(datapath.LBService{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.13"), Port: 53, Proto: datapath.ProtoUDP}}); err != nil {
			t.Fatal(err)
		}
		for _, spec := range []string{"tcp 10.96.0.13:80", "udp 10.96.0.13:53"} {
			if got, err := runClient(t, cg, spec); err == nil || !strings.Contains(err.Error(), "connection refused") {
				t.Errorf("client %q of a service without backends: %q, %v; want connection refused", spec, got, err)
			}
		}

		// --bpf-lb-sock-hostns-only: a pod's socket in the cgroup is not
		// translated (its endpoint programs would balance it), the
		// node's still is. The node answers "vip" on the ClusterIP
		// itself, so a connection that was not translated says so.
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
		newVeth(t, "p1")
		pod := newNS(t)
		plumbLink(t, "p1", pod, []string{"10.1.9.1/24"}, []string{"10.1.9.2/24"})
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.AddrAdd(lo, &netlink.Addr{IPNet: netlink.NewIPNet(net.ParseIP("10.96.0.10"))}); err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetUp(lo); err != nil {
			t.Fatal(err)
		}
		vip, err := net.Listen("tcp4", "10.96.0.10:80")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { vip.Close() })
		go func() {
			for {
				c, err := vip.Accept()
				if err != nil {
					return
				}
				fmt.Fprintln(c, "vip")
				c.Close()
			}
		}()
		if got, err := runClientIn(t, cg, pod, "tcp 10.96.0.10:80"); err != nil || got != "b1 peer 10.96.0.10:80" {
			t.Errorf("a pod's client, every namespace translated: %q, %v; want b1", got, err)
		}
		if got, err := runClientIn(t, cg, pod, "bindtcp4 :30088"); err != nil || got != "bound" {
			t.Errorf("a pod's process binding a NodePort's port number in its own namespace: %q, %v; want bound", got, err)
		}
		cookie, err := netnsutil.Cookie()
		if err != nil {
			t.Fatal(err)
		}
		if err := h.loader.AttachSockLB(cg, cookie); err != nil {
			t.Fatalf("attach, host namespace only: %v", err)
		}
		for _, tt := range []struct {
			ns         netns.NsHandle
			spec, want string
		}{
			{pod, "tcp 10.96.0.10:80", "vip peer 10.96.0.10:80"},
			{-1, "tcp 10.96.0.10:80", "b1 peer 10.96.0.10:80"},
			{-1, "udp 10.96.0.10:53", "b1 from 10.96.0.10:53 peer 10.96.0.10:53"},
		} {
			if got, err := runClientIn(t, cg, tt.ns, tt.spec); err != nil || got != tt.want {
				t.Errorf("host namespace only: client %q (pod %v): %q, %v; want %q", tt.spec, tt.ns >= 0, got, err, tt.want)
			}
		}
	})
}

// TestEveryMapShared: each map of the endpoint programs and of the
// socket-level balancer is one of the loader's shared maps or the
// endpoint's policy map, so no load creates a private copy.
func TestEveryMapShared(t *testing.T) {
	h := newHarness(t)
	for _, load := range []func() (*ebpf.CollectionSpec, error){bpf.LoadLxc, bpf.LoadSock, bpf.LoadSockTerm} {
		spec, err := load()
		if err != nil {
			t.Fatal(err)
		}
		for name := range spec.Maps {
			if strings.HasPrefix(name, ".") || name == policymap.SpecName {
				continue
			}
			if _, err := os.Stat(filepath.Join(h.root, name)); err != nil {
				t.Errorf("map %s is not pinned by the loader: %v", name, err)
			}
		}
	}
}

// heldClient is a holdClient process: its output lines, in order.
type heldClient struct {
	cmd   *exec.Cmd
	lines chan string
}

// startHeld starts a holdClient in cgroup dir and waits for its
// "connected" line, which it returns.
func startHeld(t *testing.T, dir, spec string) (*heldClient, string) {
	t.Helper()
	return startHeldIn(t, dir, -1, spec)
}

// startHeldIn is startHeld in network namespace ns (-1: the test's).
func startHeldIn(t *testing.T, dir string, ns netns.NsHandle, spec string) (*heldClient, string) {
	t.Helper()
	cmd, done := clientCmd(t, dir, ns, spec)
	defer done()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &heldClient{cmd: cmd, lines: make(chan string, 4)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	first, err := h.next()
	if err != nil {
		t.Fatalf("client %q: %v (%s)", spec, err, errOut.String())
	}
	return h, first
}

// next returns the client's next line.
func (h *heldClient) next() (string, error) {
	select {
	case l, ok := <-h.lines:
		if !ok {
			return "", errors.New("the client exited")
		}
		return l, nil
	case <-time.After(safety):
		return "", errors.New("no line in time")
	}
}

// TestSocketTermination: the sockets the socket-level balancer connected
// to a backend are destroyed when it is terminated (its applications
// see the connection aborted), TCP and connected UDP; a socket connected
// to the backend's address directly is left; a pod's socket is found
// when the terminator runs in the pod's namespace.
func TestSocketTermination(t *testing.T) {
	inNewNetns(t, func() {
		h := newHarness(t)
		lb := h.lbWriter(t)
		newVeth(t, "b1")
		ns := newNS(t)
		plumbLink(t, "b1", ns, []string{"10.1.1.1/24"}, []string{"10.1.1.2/24"})
		serve(t, ns, "b1")
		for _, s := range []struct {
			port, target uint16
			proto        uint8
		}{{80, 8080, datapath.ProtoTCP}, {53, 5353, datapath.ProtoUDP}} {
			if err := lb.UpsertService(datapath.LBService{
				Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.10"), Port: s.port, Proto: s.proto},
				Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.1.1.2"), Port: s.target, Proto: s.proto}}},
			}); err != nil {
				t.Fatal(err)
			}
		}
		cg := testCgroup(t)
		if err := h.loader.AttachSockLB(cg, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.loader.DetachSockLB() })
		viaTCP, got := startHeld(t, cg, "holdtcp 10.96.0.10:80")
		if got != "connected b1" {
			t.Fatalf("TCP client through the ClusterIP: %q", got)
		}
		viaUDP, got := startHeld(t, cg, "holdudp 10.96.0.10:53")
		if got != "connected b1" {
			t.Fatalf("UDP client through the ClusterIP: %q", got)
		}
		direct, got := startHeld(t, cg, "holdtcp 10.1.1.2:8080")
		if got != "connected b1" {
			t.Fatalf("TCP client to the backend's address: %q", got)
		}
		// A pod's TCP client, in its own namespace.
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
		newVeth(t, "p1")
		pod := newNS(t)
		plumbLink(t, "p1", pod, []string{"10.1.9.1/24"}, []string{"10.1.9.2/24"})
		podTCP, got := startHeldIn(t, cg, pod, "holdtcp 10.96.0.10:80")
		if got != "connected b1" {
			t.Fatalf("a pod's TCP client through the ClusterIP: %q", got)
		}
		term, err := h.loader.NewSockTerminator()
		if err != nil {
			t.Fatal(err)
		}
		defer term.Close()
		for _, tt := range []struct {
			proto  uint8
			port   uint16
			client *heldClient
		}{{datapath.ProtoTCP, 8080, viaTCP}, {datapath.ProtoUDP, 5353, viaUDP}} {
			n, err := term.Terminate(datapath.L3n4Addr{Addr: netip.MustParseAddr("10.1.1.2"), Port: tt.port, Proto: tt.proto})
			if err != nil || n != 1 {
				t.Fatalf("terminate the sockets of backend port %d: %d, %v; want 1", tt.port, n, err)
			}
			if got, err := tt.client.next(); err != nil || !strings.HasPrefix(got, "closed: ") ||
				!strings.HasSuffix(got, "software caused connection abort") {
				t.Errorf("client of backend port %d after the termination: %q, %v", tt.port, got, err)
			}
		}
		select {
		case l := <-direct.lines:
			t.Errorf("the client connected to the backend directly: %q", l)
		case l := <-podTCP.lines:
			t.Errorf("the pod's client, with the terminator run in the node's namespace only: %q", l)
		case <-time.After(200 * time.Millisecond):
		}
		// Run in the pod's namespace, it finds the pod's socket.
		var n int
		err = netnsutil.Run(pod, func() (err error) {
			n, err = term.Terminate(datapath.L3n4Addr{Addr: netip.MustParseAddr("10.1.1.2"), Port: 8080, Proto: datapath.ProtoTCP})
			return err
		})
		if err != nil || n != 1 {
			t.Fatalf("terminate in the pod's namespace: %d, %v; want 1", n, err)
		}
		if got, err := podTCP.next(); err != nil || !strings.HasSuffix(got, "software caused connection abort") {
			t.Errorf("the pod's client after the termination: %q, %v", got, err)
		}
	})
}
