package interop_test

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// The lab of TestGlobalServiceWithCilium: the apiary node's namespace and
// the namespace of cilium2's node worker-1 joined by a veth (n0 on both
// sides, 192.168.70.1 and .2). The apiary agent routes cilium2's pod CIDR
// via worker-1 (--auto-direct-node-routes, from the node Cilium's writer
// published); worker-1 routes apiary1's pod CIDR back and forwards to its
// pods, each in a namespace of its own behind a /30 veth (pod address
// .2 of the /30, worker-1's side .1), as a node of a native-routing
// Cilium cluster would.
const (
	labNodeIP   = "192.168.70.1"
	labWorkerIP = "192.168.70.2"
	labPodCIDR  = "10.1.1.0/24"
)

// newWorker makes worker-1's namespace, joined to node's, forwarding,
// with the route to apiary1's pod CIDR via the apiary node.
func newWorker(t *testing.T, node string) string {
	t.Helper()
	worker := netnstest.New(t, "apiary-iop-worker")
	netnstest.Join(t, node, worker, netip.MustParseAddr(labNodeIP), netip.MustParseAddr(labWorkerIP))
	netnstest.Must(t, worker, func() error {
		return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644)
	})
	netnstest.AddRoute(t, worker, netip.MustParsePrefix(labPodCIDR), netip.MustParseAddr(labNodeIP))
	return worker
}

// newRemotePod makes a pod of worker-1 at ip, the second address of a
// /30: its namespace, a veth from worker-1 (iop<n> there, eth0 in the
// pod) with worker-1's side on the first address, and the pod's default
// route via it. It returns the pod's namespace.
func newRemotePod(t *testing.T, worker string, n int, ip netip.Addr) string {
	t.Helper()
	link := netip.PrefixFrom(ip, 30)
	gw := link.Masked().Addr().Next()
	if gw.Next() != ip {
		t.Fatalf("remote pod %s: not the second address of its /30", ip)
	}
	pod := netnstest.New(t, "apiary-iop-pod")
	podNS, err := netns.GetFromPath(pod)
	if err != nil {
		t.Fatal(err)
	}
	defer podNS.Close()
	host := fmt.Sprintf("iop%d", n)
	netnstest.Must(t, worker, func() error {
		return netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: host}, PeerName: "eth0",
			PeerNamespace: netlink.NsFd(int(podNS))})
	})
	for _, end := range []struct {
		ns, link string
		addr     netip.Addr
	}{{worker, host, gw}, {pod, "eth0", ip}} {
		netnstest.Must(t, end.ns, func() error {
			l, err := netlink.LinkByName(end.link)
			if err != nil {
				return err
			}
			if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: end.addr.AsSlice(), Mask: net.CIDRMask(link.Bits(), 32)}}); err != nil {
				return err
			}
			return netlink.LinkSetUp(l)
		})
	}
	netnstest.Must(t, pod, func() error {
		return netlink.RouteAdd(&netlink.Route{Gw: gw.AsSlice()})
	})
	return pod
}

// nameServer runs, in the namespace at path, a TCP server on ip:port
// that writes name and a newline on every connection and closes it.
func nameServer(t *testing.T, path string, ip netip.Addr, port int, name string) {
	t.Helper()
	var l net.Listener
	netnstest.Must(t, path, func() error {
		var err error
		l, err = net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		return err
	})
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintln(c, name)
			c.Close()
		}
	})
}

// askName connects from the namespace at path to addr and returns the
// name the server answers with.
func askName(path string, addr netip.AddrPort, timeout time.Duration) (string, error) {
	var c net.Conn
	err := netnsutil.RunPath(path, func() error {
		var err error
		c, err = (&net.Dialer{Timeout: timeout}).Dial("tcp", addr.String())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read from %s: %w", addr, err)
	}
	return strings.TrimSpace(line), nil
}

// askNames connects n times from path to addr and counts the answers by
// name; any failed connection fails the test.
func askNames(t *testing.T, path string, addr netip.AddrPort, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for range n {
		name, err := askName(path, addr, 5*time.Second)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		got[name]++
	}
	return got
}
