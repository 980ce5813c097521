package agent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// node is where one enforcing agent keeps its state: its network
// namespace, state dir, bpffs root and policy dir.
type node struct {
	name, ns, stateDir, bpfRoot, policyDir string
	ip, podCIDR                            string
	ip6                                    string // a dual-stack node's IPv6 address
}

// newNodeA is node-a (192.0.2.10, pod CIDR 10.0.1.0/24) in a new
// network namespace, with its own state dir, bpffs root and policy dir.
func newNodeA(t *testing.T) node {
	return node{name: "node-a", ns: netnstest.New(t, "apiary-node"), stateDir: t.TempDir(), bpfRoot: bpfmaptest.Root(t),
		policyDir: t.TempDir(), ip: "192.0.2.10", podCIDR: "10.0.1.0/24"}
}

// startNode starts the whole agent for n (real loader, Linux datapath in
// n.ns, identities in srv's etcd, or without a kvstore when srv is nil)
// and returns its client and a stop function.
func startNode(t *testing.T, n node, srv *kvstoretest.Server, flags ...string) (*client.Client, func()) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	nodeIP := n.ip
	if n.ip6 != "" {
		nodeIP += "," + n.ip6
	}
	base := []string{
		"socket-path=" + socket, "state-dir=" + n.stateDir, "bpf-root=" + n.bpfRoot, "datapath-netns=" + n.ns,
		"cluster-name=c1", "cluster-id=1", "node-name=" + n.name, "node-ip=" + nodeIP, "pod-cidr=" + n.podCIDR,
		"policy-dir=" + n.policyDir, "kvstore-heartbeat-writer=false",
	}
	if srv != nil { // nil: no kvstore, identities of this node only
		base = append(base, "kvstore=etcd", "kvstore-opt=etcd.address="+srv.Endpoint())
	}
	h := celltest.New(t, append(base, flags...), agent.Agent)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := client.New(socket)
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		c.Close()
		if err := h.Stop(context.Background()); err != nil {
			t.Errorf("stop agent %s: %v", n.name, err)
		}
	}
	t.Cleanup(stop)
	return c, stop
}

// createEndpoint creates an endpoint in ns with app=<app> and waits until
// it is ready.
func createEndpoint(t *testing.T, c *client.Client, id uint16, ns, app string) *models.Endpoint {
	t.Helper()
	_, err := c.EndpointPut(context.Background(), id, models.EndpointRequest{NetNSPath: ns,
		Labels: []string{"app=" + app, "io.kubernetes.pod.namespace=default"}})
	if err != nil {
		t.Fatalf("PUT endpoint %d: %v", id, err)
	}
	return waitEndpointReady(t, c, id)
}

func waitEndpointReady(t *testing.T, c *client.Client, id uint16) *models.Endpoint {
	t.Helper()
	var ep *models.Endpoint
	celltest.Eventually(t, fmt.Sprintf("endpoint %d ready", id), func() bool {
		got, err := c.Endpoint(context.Background(), id)
		if err == nil && got.State == "ready" {
			ep = got
		}
		return ep != nil
	})
	return ep
}

func addrOf(t *testing.T, ep *models.Endpoint) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(ep.IPv4)
	if err != nil {
		t.Fatalf("endpoint %d IPv4 %q: %v", ep.ID, ep.IPv4, err)
	}
	return a
}

// denyTimeout is how long a denied connection attempt waits: the
// programs drop the packets, so nothing answers.
const denyTimeout = 700 * time.Millisecond

func wantTCP(t *testing.T, from string, ip netip.Addr, port int, allowed bool) {
	t.Helper()
	timeout := 5 * time.Second
	if !allowed {
		timeout = denyTimeout
	}
	err := netnstest.Dial(from, ip, port, timeout)
	switch {
	case allowed && err != nil:
		t.Errorf("TCP to %s:%d should pass: %v", ip, port, err)
	case !allowed && err == nil:
		t.Errorf("TCP to %s:%d passed, want it dropped", ip, port)
	case !allowed && !errors.Is(err, os.ErrDeadlineExceeded) && !isTimeout(err):
		t.Errorf("TCP to %s:%d: %v, want a timeout (dropped)", ip, port, err)
	}
}

func wantUDP(t *testing.T, from string, ip netip.Addr, port int, allowed bool) {
	t.Helper()
	timeout := 5 * time.Second
	if !allowed {
		timeout = denyTimeout
	}
	err := netnstest.DialUDP(from, ip, port, timeout)
	if allowed && err != nil {
		t.Errorf("UDP to %s:%d should pass: %v", ip, port, err)
	}
	if !allowed && err == nil {
		t.Errorf("UDP to %s:%d passed, want it dropped", ip, port)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// serve starts TCP and UDP echo servers on ip:port in ns.
func serve(t *testing.T, ns string, ip netip.Addr, ports ...int) {
	t.Helper()
	for _, p := range ports {
		stop, err := netnstest.Echo(ns, ip, p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		stopUDP, err := netnstest.EchoUDP(ns, ip, p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stopUDP)
	}
}

// linkIDs returns the ids of the pinned tcx links of endpoint id.
func linkIDs(t *testing.T, root string, id uint16) [2]link.ID {
	t.Helper()
	var out [2]link.ID
	for i, dir := range []string{"ingress", "egress"} {
		l, err := link.LoadPinnedLink(filepath.Join(root, "links", fmt.Sprint(id), dir), nil)
		if err != nil {
			t.Fatalf("endpoint %d %s link: %v", id, dir, err)
		}
		info, err := l.Info()
		l.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = info.ID
	}
	return out
}

// ctEntriesOf returns the conntrack entries owned by the endpoint
// address addr.
func ctEntriesOf(t *testing.T, m *ctmap.Maps, addr netip.Addr) []ctmap.Entry {
	t.Helper()
	all, err := m.Dump()
	if err != nil {
		t.Fatal(err)
	}
	var out []ctmap.Entry
	for _, e := range all {
		if e.Tuple.EndpointAddr() == addr {
			out = append(out, e)
		}
	}
	return out
}

// wantCut checks that conn, an established TCP connection to an Echo
// server at ip:port whose allow was removed, carries nothing any more and
// that the agent's monitor shows the drop of its data at endpoint epID's
// ingress.
func wantCut(t *testing.T, c *client.Client, conn net.Conn, ip netip.Addr, epID uint16) {
	t.Helper()
	mctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	next, stop := iter.Pull2(c.Monitor(mctx, models.MonitorTypeDrop))
	defer stop()
	if msg, err, ok := next(); !ok || err != nil || msg.Type != models.MonitorTypeSubscribed {
		t.Fatalf("first monitor message = %+v, %v, %v; want subscribed", msg, err, ok)
	}
	const msg = "after the allow was removed"
	_ = conn.SetDeadline(time.Now().Add(denyTimeout))
	if _, err := io.WriteString(conn, msg); err != nil {
		t.Fatalf("write on the established connection: %v", err)
	}
	buf := make([]byte, len(msg))
	if n, err := io.ReadFull(conn, buf); err == nil || !isTimeout(err) {
		t.Errorf("echo on the cut connection: %q (%d bytes), %v; want a timeout", buf[:n], n, err)
	}
	local := netip.MustParseAddrPort(conn.LocalAddr().String())
	for {
		msg, err, ok := next()
		if !ok || err != nil {
			t.Fatalf("no drop of the established connection %s -> %s in the monitor stream: %v", local, conn.RemoteAddr(), err)
		}
		ev := msg.MonitorEvent
		if ev == nil || ev.Source.Port != local.Port() || ev.Destination.IP != ip.String() {
			continue
		}
		if ev.Reason != "Policy denied" || ev.Direction != "ingress" || ev.EndpointID != epID || ev.Protocol != "TCP" {
			t.Errorf("drop event %+v, want policy denied at endpoint %d's ingress", ev, epID)
		}
		return
	}
}
