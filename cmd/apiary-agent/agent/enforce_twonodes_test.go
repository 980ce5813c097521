package agent_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/datapath/tunnel"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
)

// TestEnforcementAcrossNodes runs two dual-stack agents on one etcd,
// each with its datapath in a node namespace, the namespaces joined by a
// veth and routed with --auto-direct-node-routes (IPv4 and IPv6 pod
// CIDRs via the node addresses of their family). Pods a and x live on
// node A, pod b on node B; b admits a only. Node B's BPF ipcache map
// learns a's and x's identities, both families, from node A's kvstore
// entries, so a reaches b (TCP and ping) and x is dropped at b's
// ingress, over IPv4 and IPv6.
func TestEnforcementAcrossNodes(t *testing.T) {
	enforceAcrossNodes(t, "auto-direct-node-routes")
}

// TestEnforcementAcrossNodesTunnel is the same with --routing-mode=tunnel
// and no route to the other node's pod CIDRs on the link between the
// nodes (only into the tunnel device): the pods' packets go through the
// nodes' VXLAN devices, and b's ingress decides on the identity the
// tunnel carries. Node B's agent restarts under an open connection.
func TestEnforcementAcrossNodesTunnel(t *testing.T) {
	enforceAcrossNodes(t, "routing-mode=tunnel")
}

func enforceAcrossNodes(t *testing.T, routing string) {
	srv := kvstoretest.StartServer(t)
	policyDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(policyDir, "policy.yaml"), []byte(enforcePolicy+"---\n"+bPingFromA), 0o600); err != nil {
		t.Fatal(err)
	}
	na := node{name: "node-a", ns: netnstest.New(t, "apiary-node"), stateDir: t.TempDir(), bpfRoot: bpfmaptest.Root(t),
		policyDir: policyDir, ip: "192.168.60.1", ip6: "fd00:60::1", podCIDR: "10.0.1.0/24,fd00:1::/120"}
	nb := node{name: "node-b", ns: netnstest.New(t, "apiary-node"), stateDir: t.TempDir(), bpfRoot: bpfmaptest.Root(t),
		policyDir: policyDir, ip: "192.168.60.2", ip6: "fd00:60::2", podCIDR: "10.0.2.0/24,fd00:2::/120"}
	netnstest.Join(t, na.ns, nb.ns, netip.MustParseAddr(na.ip), netip.MustParseAddr(nb.ip))
	for _, n := range []node{na, nb} {
		netnstest.AddAddr(t, n.ns, "n0", netip.PrefixFrom(netip.MustParseAddr(n.ip6), 64))
	}
	ca, _ := startNode(t, na, srv, routing)
	cb, stopB := startNode(t, nb, srv, routing)

	podA, podX, podB := netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod")
	epA := createEndpoint(t, ca, 1, podA, "a")
	epX := createEndpoint(t, ca, 2, podX, "x")
	epB := createEndpoint(t, cb, 1, podB, "b")
	ipA, ipX, ipB := addrOf(t, epA), addrOf(t, epX), addrOf(t, epB)
	ip6A, ip6X, ip6B := addr6Of(t, epA), addr6Of(t, epX), addr6Of(t, epB)
	serve(t, podB, ipB, 8080)
	serve(t, podB, ip6B, 8080)

	m, err := ipcachemap.Open(celltest.Logger(t), nb.bpfRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, ep := range []struct {
		ip netip.Addr
		id uint32
	}{{ipA, epA.Identity}, {ipX, epX.Identity}, {ip6A, epA.Identity}, {ip6X, epX.Identity}} {
		celltest.Eventually(t, "node B's ipcache map has "+ep.ip.String(), func() bool {
			got, ok, err := m.Lookup(ep.ip)
			return err == nil && ok && got == identity.NumericIdentity(ep.id)
		})
	}
	dump, err := m.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if e := dump[netip.PrefixFrom(ipA, 32)]; e.TunnelPeer != netip.MustParseAddr(na.ip) {
		t.Errorf("node B's ipcache map entry of %s: %+v, want tunnel peer %s", ipA, e, na.ip)
	}

	if routing == "routing-mode=tunnel" {
		st, err := ca.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		line := "missing"
		for _, e := range st.Entries {
			if e.Name == "Routing" && e.State == status.Ok {
				line = e.Message
			}
		}
		if !strings.HasPrefix(line, "Tunnel (vxlan): apiary_vxlan ifindex ") {
			t.Errorf("Routing line %q, want Ok and the tunnel device", line)
		}
		netnstest.Must(t, podA, func() error {
			l, err := netlink.LinkByName("eth0")
			if err == nil && l.Attrs().MTU != 1450 {
				t.Errorf("tunnel mode: pod a's eth0 MTU %d, want 1450 (1500 less the VXLAN header)", l.Attrs().MTU)
			}
			return err
		})
		// Node A routes b's pod CIDR only into its tunnel device (for its
		// own traffic); nothing goes through the underlay's n0.
		for _, dst := range []netip.Addr{ipB, ip6B} {
			celltest.Eventually(t, "node A routes "+dst.String()+" into "+tunnel.DeviceName, func() bool {
				ok := false
				netnstest.Must(t, na.ns, func() error {
					dev, err := netlink.LinkByName(tunnel.DeviceName)
					if err != nil {
						return err
					}
					rs, err := netlink.RouteGet(dst.AsSlice())
					ok = err == nil && len(rs) == 1 && rs[0].LinkIndex == dev.Attrs().Index && rs[0].Gw == nil
					return nil
				})
				return ok
			})
		}
	}
	for _, dst := range []netip.Addr{ipB, ip6B} {
		celltest.Eventually(t, "a on node A reaches b on node B at "+dst.String(), func() bool {
			return netnstest.Dial(podA, dst, 8080, time.Second) == nil
		})
		wantTCP(t, podX, dst, 8080, false)
		wantTCP(t, podA, dst, 8080, true)
		wantPing(t, podA, netip.Addr{}, dst, true)
		wantPing(t, podX, netip.Addr{}, dst, false)
	}
	if routing == "routing-mode=tunnel" {
		restartUnderTraffic(t, nb, srv, stopB, podA, podX, ipB)
	}
}

// restartUnderTraffic stops node B's agent with a connection from a to b
// open, and starts it again: the connection carries data throughout and
// x stays dropped, while the agent is down and after it came back.
func restartUnderTraffic(t *testing.T, nb node, srv *kvstoretest.Server, stopB func(), podA, podX string, ipB netip.Addr) {
	conn := netnstest.Connect(t, podA, ipB, 8080)
	netnstest.RoundTrip(t, conn, "before the restart\n")
	stopB()
	netnstest.RoundTrip(t, conn, "agent down\n")
	wantTCP(t, podX, ipB, 8080, false)
	cb, _ := startNode(t, nb, srv, "routing-mode=tunnel")
	waitEndpointReady(t, cb, 1)
	netnstest.RoundTrip(t, conn, "after the restart\n")
	wantTCP(t, podX, ipB, 8080, false)
}

// bPingFromA lets a ping b, over IPv4 and IPv6.
const bPingFromA = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: b-ping-from-a, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: b}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: a}}]
    icmps: [{fields: [{type: EchoRequest}, {type: EchoRequest, family: IPv6}]}]
`

func addr6Of(t *testing.T, ep *models.Endpoint) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(ep.IPv6)
	if err != nil || !a.Is6() {
		t.Fatalf("endpoint %d IPv6 %q: %v", ep.ID, ep.IPv6, err)
	}
	return a
}
