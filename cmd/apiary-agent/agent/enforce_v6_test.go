package agent_test

import (
	"context"
	"iter"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// dualStackPolicy, over IPv4 and IPv6 alike: b admits a on 8080/TCP,
// 5353/UDP and ICMP echo (icmps, by name and by number), c on everything
// but 9090/TCP (deny beats an L3 allow), and the external fd00:99::/112
// on 8080/TCP except fd00:99::3 (a CIDR deny beating a CIDR allow). c
// admits b on everything but ICMPv6 echo requests (an icmps deny).
const dualStackPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: b-dual-stack, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: b}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: a}}]
    toPorts: [{ports: [{port: "8080", protocol: TCP}, {port: "5353", protocol: UDP}]}]
  - fromEndpoints: [{matchLabels: {app: a}}]
    icmps: [{fields: [{type: EchoRequest, family: IPv4}, {type: 128, family: IPv6}]}]
  - fromEndpoints: [{matchLabels: {app: c}}]
  - fromCIDR: ["fd00:99::/112"]
    toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
  ingressDeny:
  - fromEndpoints: [{matchLabels: {app: c}}]
    toPorts: [{ports: [{port: "9090", protocol: TCP}]}]
  - fromCIDR: ["fd00:99::3/128"]
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: c-dual-stack, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: c}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: b}}]
  ingressDeny:
  - fromEndpoints: [{matchLabels: {app: b}}]
    icmps: [{fields: [{type: EchoRequest, family: IPv6}]}]
`

// The external namespace: its addresses and the node's on their link.
var (
	extAllowed  = netip.MustParseAddr("fd00:99::2")   // in fd00:99::/112
	extDenied   = netip.MustParseAddr("fd00:99::3")   // in it, and denied
	extOutside  = netip.MustParseAddr("fd00:99::1:2") // outside it: world-ipv6
	extNodeSide = netip.MustParseAddr("fd00:99::1")
)

// dualStackPod is an endpoint of the dual-stack test with its addresses.
type dualStackPod struct {
	ns     string
	ep     *models.Endpoint
	v4, v6 netip.Addr
}

func (p dualStackPod) addrs() []netip.Addr { return []netip.Addr{p.v4, p.v6} }

// startDualStack starts an agent with an IPv4 and an IPv6 pod CIDR and
// the dual-stack policy, creates pods a, b and c through its API, joins
// an external namespace (addresses extAllowed, extDenied, extOutside) to
// the node, and returns the client, the pods and the external namespace.
func startDualStack(t *testing.T) (*client.Client, map[string]dualStackPod, string) {
	t.Helper()
	srv := kvstoretest.StartServer(t)
	n := node{name: "node-a", ns: netnstest.New(t, "apiary-node"), stateDir: t.TempDir(), bpfRoot: bpfmaptest.Root(t),
		policyDir: t.TempDir(), ip: "192.0.2.10", podCIDR: "10.0.1.0/24,fd00:1::/120"}
	if err := os.WriteFile(filepath.Join(n.policyDir, "policy.yaml"), []byte(dualStackPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	ext := netnstest.New(t, "apiary-ext")
	netnstest.Join(t, n.ns, ext, netip.MustParseAddr("192.168.99.1"), netip.MustParseAddr("192.168.99.2"))
	netnstest.AddAddr(t, n.ns, "n0", netip.PrefixFrom(extNodeSide, 64))
	for _, a := range []netip.Addr{extAllowed, extDenied, extOutside} {
		netnstest.AddAddr(t, ext, "n0", netip.PrefixFrom(a, 64))
	}
	netnstest.AddRoute(t, ext, netip.MustParsePrefix("fd00:1::/120"), extNodeSide)

	c, _ := startNode(t, n, srv, "conntrack-gc-interval=1h")
	pods := map[string]dualStackPod{}
	for i, app := range []string{"a", "b", "c"} {
		ns := netnstest.New(t, "apiary-pod")
		ep := createEndpoint(t, c, uint16(i+1), ns, app)
		v4, err4 := netip.ParseAddr(ep.IPv4)
		v6, err6 := netip.ParseAddr(ep.IPv6)
		if err4 != nil || err6 != nil || !v4.Is4() || !v6.Is6() {
			t.Fatalf("endpoint %s addresses %q, %q: want one IPv4 and one IPv6", app, ep.IPv4, ep.IPv6)
		}
		pods[app] = dualStackPod{ns: ns, ep: ep, v4: v4, v6: v6}
	}
	return c, pods, ext
}

func wantPing(t *testing.T, from string, src, dst netip.Addr, allowed bool) {
	t.Helper()
	timeout := 5 * time.Second
	if !allowed {
		timeout = denyTimeout
	}
	err := netnstest.Ping(from, src, dst, timeout)
	if allowed && err != nil {
		t.Errorf("ping %s should pass: %v", dst, err)
	}
	if !allowed && err == nil {
		t.Errorf("ping %s passed, want it dropped", dst)
	}
}

// TestEnforcementDualStack runs the whole agent with the real loader and
// dual-stack endpoints created through its API: TCP, UDP and ICMP echo
// over IPv6 (and the same policy over IPv4) allowed and denied as the
// policy says (L3 by labels, L4 ports, icmps by type name and number,
// a CIDR rule with an IPv6 prefix, deny beating allow, default deny),
// and the IPv6 drops in the monitor stream with both identities.
func TestEnforcementDualStack(t *testing.T) {
	c, pods, ext := startDualStack(t)
	a, b, cc := pods["a"], pods["b"], pods["c"]
	for _, ip := range b.addrs() {
		serve(t, b.ns, ip, 8080, 9090, 5353, 5354)
	}
	serve(t, cc.ns, cc.v6, 8080)

	t.Run("TCP and UDP over IPv6", func(t *testing.T) {
		wantTCP(t, a.ns, b.v6, 8080, true)
		wantTCP(t, a.ns, b.v6, 9090, false) // default deny: no rule for a on 9090
		wantUDP(t, a.ns, b.v6, 5353, true)
		wantUDP(t, a.ns, b.v6, 5354, false)
		wantTCP(t, cc.ns, b.v6, 8080, true)  // L3 rule by labels
		wantUDP(t, cc.ns, b.v6, 5354, true)  // L3: any port, any protocol
		wantTCP(t, cc.ns, b.v6, 9090, false) // the deny beats the L3 allow
	})
	t.Run("the same policy over IPv4", func(t *testing.T) {
		wantTCP(t, a.ns, b.v4, 8080, true)
		wantTCP(t, a.ns, b.v4, 9090, false)
		wantUDP(t, a.ns, b.v4, 5353, true)
		wantTCP(t, cc.ns, b.v4, 9090, false)
	})
	t.Run("IPv6 CIDR rules", func(t *testing.T) {
		wantTCPFrom(t, ext, extAllowed, b.v6, 8080, true)
		wantTCPFrom(t, ext, extAllowed, b.v6, 9090, false) // the CIDR rule has 8080 only
		wantTCPFrom(t, ext, extDenied, b.v6, 8080, false)  // the /128 deny beats the /112 allow
		wantTCPFrom(t, ext, extOutside, b.v6, 8080, false) // world-ipv6: no rule
	})
	t.Run("ICMP and ICMPv6 echo", func(t *testing.T) {
		for _, dst := range b.addrs() {
			wantPing(t, a.ns, netip.Addr{}, dst, true)  // icmps EchoRequest / 128
			wantPing(t, cc.ns, netip.Addr{}, dst, true) // L3 rule
		}
		wantPing(t, b.ns, netip.Addr{}, cc.v4, true)  // L3 rule
		wantPing(t, b.ns, netip.Addr{}, cc.v6, false) // icmps deny of IPv6 echo requests
		wantPing(t, a.ns, netip.Addr{}, cc.v4, false) // default deny
		wantPing(t, a.ns, netip.Addr{}, cc.v6, false)
		wantPing(t, ext, extAllowed, b.v6, false) // the CIDR rule has 8080/TCP only
		wantTCP(t, b.ns, cc.v6, 8080, true)       // only echo requests are denied to b
	})

	t.Run("IPv6 drops in apiary monitor", func(t *testing.T) {
		icmpv6Echo := uint8(128)
		for _, want := range []struct {
			name     string
			from, to dualStackPod
			port     uint16
			proto    string
			icmpType *uint8
			reason   string
			provoke  func()
		}{
			{"default deny of TCP", a, b, 9090, "TCP", nil, "Policy denied",
				func() { _ = netnstest.Dial(a.ns, b.v6, 9090, 100*time.Millisecond) }},
			{"icmps deny of echo requests", b, cc, 0, "ICMPv6", &icmpv6Echo, "Policy denied by denylist",
				func() { _ = netnstest.Ping(b.ns, netip.Addr{}, cc.v6, 100*time.Millisecond) }},
		} {
			t.Run(want.name, func(t *testing.T) {
				ev := waitDrop(t, c, want.provoke, func(ev *models.MonitorEvent) bool {
					return ev.Destination.IP == want.to.v6.String() && ev.Protocol == want.proto && ev.Destination.Port == want.port
				})
				if ev.Reason != want.reason || ev.Direction != "ingress" || ev.EndpointID != want.to.ep.ID ||
					ev.Source.Identity != want.from.ep.Identity || ev.Destination.Identity != want.to.ep.Identity ||
					ev.Source.IP != want.from.v6.String() || len(ev.Source.Labels) == 0 || len(ev.Destination.Labels) == 0 ||
					(want.icmpType != nil) != (ev.ICMPType != nil) || want.icmpType != nil && *ev.ICMPType != *want.icmpType {
					t.Errorf("drop event %+v, want %q at endpoint %d's ingress, %d -> %d, from %s, with labels",
						ev, want.reason, want.to.ep.ID, want.from.ep.Identity, want.to.ep.Identity, want.from.v6)
				}
			})
		}
	})
}

// wantTCPFrom is wantTCP from the source address src.
func wantTCPFrom(t *testing.T, ns string, src, dst netip.Addr, port int, allowed bool) {
	t.Helper()
	timeout := 5 * time.Second
	if !allowed {
		timeout = denyTimeout
	}
	err := netnstest.DialFrom(ns, src, dst, port, timeout)
	if allowed && err != nil {
		t.Errorf("TCP %s -> %s:%d should pass: %v", src, dst, port, err)
	}
	if !allowed && (err == nil || !isTimeout(err)) {
		t.Errorf("TCP %s -> %s:%d: %v, want a timeout (dropped)", src, dst, port, err)
	}
}

// waitDrop subscribes to the agent's drops, calls provoke until a drop
// that match accepts comes, and returns it.
func waitDrop(t *testing.T, c *client.Client, provoke func(), match func(*models.MonitorEvent) bool) *models.MonitorEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	next, stop := iter.Pull2(c.Monitor(ctx, models.MonitorTypeDrop))
	defer stop()
	if msg, err, ok := next(); !ok || err != nil || msg.Type != models.MonitorTypeSubscribed {
		t.Fatalf("first monitor message = %+v, %v, %v; want subscribed", msg, err, ok)
	}
	done := make(chan struct{})
	defer func() { cancel(); <-done }()
	go func() { // keep provoking until the drop is seen
		defer close(done)
		for ctx.Err() == nil {
			provoke()
			time.Sleep(200 * time.Millisecond)
		}
	}()
	for {
		msg, err, ok := next()
		if !ok || err != nil {
			t.Fatalf("no such drop in the monitor stream: %v", err)
		}
		if ev := msg.MonitorEvent; ev != nil && match(ev) {
			return ev
		}
	}
}
