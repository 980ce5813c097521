package agent_test

import (
	"context"
	"errors"
	"iter"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// enforcePolicy lets app=a reach app=b on 8080/TCP and 5353/UDP, and
// app=b reach app=c on 8080/TCP; everything else into b and c is denied.
const enforcePolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: b-from-a, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: b}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: a}}]
    toPorts: [{ports: [{port: "8080", protocol: TCP}, {port: "5353", protocol: UDP}]}]
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: c-from-b, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: c}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: b}}]
    toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
`

// cFromA, imported through the API, opens c to a on 8080/TCP.
const cFromA = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: c-from-a, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: c}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: a}}]
    toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
`

// denyAToBUDP, imported through the API, denies a->b on 5353/UDP, which
// the --policy-dir policy allows; it must survive the restart.
const denyAToBUDP = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: b-deny-udp, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: b}}
  ingressDeny:
  - fromEndpoints: [{matchLabels: {app: a}}]
    toPorts: [{ports: [{port: "5353", protocol: UDP}]}]
`

// TestEnforcement runs the whole agent with the real BPF loader on a
// node namespace: three endpoints created through the API, a policy from
// --policy-dir enforced on real TCP and UDP traffic, the drop in the
// events ring buffer, a policy change through the API taking effect
// within a second, and an agent restart: enforcement and an established
// connection continue while it is down; after it, the endpoints are
// restored with their addresses, identities and attached programs, a
// deny imported through the API still holds, and
// the first conntrack GC removes the entries of the endpoint that
// vanished meanwhile.
func TestEnforcement(t *testing.T) {
	ctx := context.Background()
	srv := kvstoretest.StartServer(t)
	n := newNodeA(t)
	if err := os.WriteFile(filepath.Join(n.policyDir, "policy.yaml"), []byte(enforcePolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	pods := map[string]string{"a": netnstest.New(t, "apiary-pod"), "b": netnstest.New(t, "apiary-pod"), "c": netnstest.New(t, "apiary-pod")}
	c, stop := startNode(t, n, srv, "conntrack-gc-interval=1h")
	epA := createEndpoint(t, c, 1, pods["a"], "a")
	epB := createEndpoint(t, c, 2, pods["b"], "b")
	epC := createEndpoint(t, c, 3, pods["c"], "c")
	ipA, ipB, ipC := addrOf(t, epA), addrOf(t, epB), addrOf(t, epC)
	if !epB.Policy.IngressEnforcement || !epC.Policy.IngressEnforcement || epA.Policy.IngressEnforcement {
		t.Fatalf("ingress enforcement a=%v b=%v c=%v, want only b and c", epA.Policy.IngressEnforcement, epB.Policy.IngressEnforcement, epC.Policy.IngressEnforcement)
	}
	serve(t, pods["b"], ipB, 8080, 9090, 5353, 5354)
	serve(t, pods["c"], ipC, 8080)

	t.Run("ipcache map", func(t *testing.T) {
		m, err := ipcachemap.Open(celltest.Logger(t), n.bpfRoot)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for _, ep := range []struct {
			ip netip.Addr
			id uint32
		}{{ipA, epA.Identity}, {ipB, epB.Identity}, {ipC, epC.Identity}} {
			celltest.Eventually(t, "ipcache map entry of "+ep.ip.String(), func() bool {
				got, ok, err := m.Lookup(ep.ip)
				return err == nil && ok && got == identity.NumericIdentity(ep.id)
			})
		}
	})

	t.Run("policy", func(t *testing.T) {
		wantTCP(t, pods["a"], ipB, 8080, true)
		wantTCP(t, pods["a"], ipB, 9090, false)
		wantUDP(t, pods["a"], ipB, 5353, true)
		wantUDP(t, pods["a"], ipB, 5354, false)
		wantTCP(t, pods["b"], ipC, 8080, true)
		wantTCP(t, pods["a"], ipC, 8080, false)
		wantTCP(t, pods["c"], ipB, 8080, false) // b admits a only
	})

	t.Run("drop event in apiary monitor", func(t *testing.T) {
		// The agent reads the ring buffer; the drop must come out of its
		// monitor stream, labels and all, as `apiary monitor` shows it.
		mctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		next, stop := iter.Pull2(c.Monitor(mctx, models.MonitorTypeDrop))
		defer stop()
		if msg, err, ok := next(); !ok || err != nil || msg.Type != models.MonitorTypeSubscribed {
			t.Fatalf("first monitor message = %+v, %v, %v; want subscribed", msg, err, ok)
		}
		go func() { // keep provoking until the drop is seen
			for mctx.Err() == nil {
				_ = netnstest.Dial(pods["a"], ipC, 8080, 100*time.Millisecond)
				time.Sleep(200 * time.Millisecond)
			}
		}()
		for {
			msg, err, ok := next()
			if !ok || err != nil {
				t.Fatalf("no drop a->c:8080 in the monitor stream: %v", err)
			}
			ev := msg.MonitorEvent
			if ev == nil || ev.Destination.IP != ipC.String() || ev.Destination.Port != 8080 {
				continue
			}
			if ev.Reason != "Policy denied" || ev.Direction != "ingress" || ev.EndpointID != 3 ||
				ev.Source.Identity != epA.Identity || ev.Destination.Identity != epC.Identity ||
				ev.Source.IP != ipA.String() || ev.Protocol != "TCP" ||
				len(ev.Source.Labels) == 0 || len(ev.Destination.Labels) == 0 {
				t.Errorf("drop event %+v, want policy denied at endpoint 3's ingress, %d -> %d, from %s, with labels",
					ev, epA.Identity, epC.Identity, ipA)
			}
			cancel()
			return
		}
	})

	t.Run("policy change within a second", func(t *testing.T) {
		if _, err := c.PolicyPut(ctx, []byte(cFromA)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		celltest.EventuallyWithin(t, "a reaches c:8080 after the import", time.Second, func() bool {
			return netnstest.Dial(pods["a"], ipC, 8080, 200*time.Millisecond) == nil
		})
		t.Logf("new verdict after %v", time.Since(start))
	})

	// Connections that stay open across the restart: a->b, and a->c
	// (whose endpoint c vanishes while the agent is down).
	connB := netnstest.Connect(t, pods["a"], ipB, 8080)
	connC := netnstest.Connect(t, pods["a"], ipC, 8080)
	netnstest.RoundTrip(t, connB, "before the restart")
	netnstest.RoundTrip(t, connC, "before the restart")
	if _, err := c.PolicyDelete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "a->c:8080 denied again", func() bool {
		return netnstest.Dial(pods["a"], ipC, 8080, 200*time.Millisecond) != nil
	})
	t.Run("policy change cuts an established connection", func(t *testing.T) {
		wantCut(t, c, connC, ipC, 3)
	})
	if _, err := c.PolicyPut(ctx, []byte(denyAToBUDP)); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "a->b:5353/UDP denied by the API-imported deny", func() bool {
		return netnstest.DialUDP(pods["a"], ipB, 5353, 200*time.Millisecond) != nil
	})
	linksA, linksB := linkIDs(t, n.bpfRoot, 1), linkIDs(t, n.bpfRoot, 2)
	stop()

	t.Run("agent down", func(t *testing.T) {
		netnstest.RoundTrip(t, connB, "while the agent is down")
		wantTCP(t, pods["a"], ipB, 9090, false)
		wantTCP(t, pods["a"], ipC, 8080, false)
		wantTCP(t, pods["a"], ipB, 8080, true)
	})
	// Endpoint c vanishes: its veth goes with its namespace's side.
	netnstest.Must(t, n.ns, func() error {
		l, err := netlink.LinkByName("lxc3")
		if err != nil {
			return err
		}
		return netlink.LinkDel(l)
	})

	cts, err := ctmap.Open(celltest.Logger(t), n.bpfRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer cts.Close()
	if len(ctEntriesOf(t, cts, ipC)) == 0 {
		t.Fatal("no conntrack entry of endpoint c before the restart")
	}

	c, _ = startNode(t, n, srv, "conntrack-gc-interval=1h")
	t.Run("restored", func(t *testing.T) {
		for _, want := range []*struct {
			id uint16
			ip netip.Addr
			ep uint32
		}{{1, ipA, epA.Identity}, {2, ipB, epB.Identity}} {
			got := waitEndpointReady(t, c, want.id)
			if got.IPv4 != want.ip.String() || got.Identity != want.ep {
				t.Errorf("endpoint %d after the restart: %s identity %d, want %s identity %d", want.id, got.IPv4, got.Identity, want.ip, want.ep)
			}
		}
		if _, err := c.Endpoint(ctx, 3); err == nil {
			t.Errorf("endpoint 3 restored, but its veth is gone")
		}
		for _, pin := range []string{"links/3", "policy_3"} {
			if _, err := os.Stat(filepath.Join(n.bpfRoot, pin)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("pin %s of the vanished endpoint 3 is left: %v", pin, err)
			}
		}
		if got := linkIDs(t, n.bpfRoot, 1); got != linksA {
			t.Errorf("endpoint 1 links %v after the restart, want the pinned %v (restored, not re-attached)", got, linksA)
		}
		if got := linkIDs(t, n.bpfRoot, 2); got != linksB {
			t.Errorf("endpoint 2 links %v after the restart, want the pinned %v", got, linksB)
		}
		netnstest.RoundTrip(t, connB, "after the restart")
		wantTCP(t, pods["a"], ipB, 9090, false)
		wantTCP(t, pods["a"], ipB, 8080, true)
		// The deny imported through the API was kept in the state dir.
		wantUDP(t, pods["a"], ipB, 5353, false)
	})

	t.Run("first conntrack GC", func(t *testing.T) {
		celltest.Eventually(t, "conntrack entries of the vanished endpoint c deleted", func() bool {
			return len(ctEntriesOf(t, cts, ipC)) == 0
		})
		// The same flow's egress entry in a stays: a was restored.
		kept := false
		for _, e := range ctEntriesOf(t, cts, ipA) {
			kept = kept || (e.Tuple.Dst == netip.AddrPortFrom(ipC, 8080) && e.Tuple.Direction == policy.Egress)
		}
		if !kept {
			t.Errorf("the egress entry of a's flow to c was deleted; a was restored")
		}
	})

	t.Run("ipcache map reconciled", func(t *testing.T) {
		m, err := ipcachemap.Open(celltest.Logger(t), n.bpfRoot)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		celltest.Eventually(t, "the vanished endpoint c's entry removed from the ipcache map", func() bool {
			dump, err := m.Dump()
			_, ok := dump[netip.PrefixFrom(ipC, 32)]
			return err == nil && !ok
		})
		for _, ep := range []struct {
			ip netip.Addr
			id uint32
		}{{ipA, epA.Identity}, {ipB, epB.Identity}} {
			if got, ok, err := m.Lookup(ep.ip); err != nil || !ok || got != identity.NumericIdentity(ep.id) {
				t.Errorf("ipcache map entry of restored %s: %d %v %v, want %d", ep.ip, got, ok, err, ep.id)
			}
		}
	})

	t.Run("delete", func(t *testing.T) {
		for _, id := range []uint16{1, 2} {
			if err := c.EndpointDelete(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		entries, err := os.ReadDir(n.bpfRoot)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "links" && strings.HasPrefix(e.Name(), "policy_") {
				t.Errorf("policy map %s pinned after the deletes", e.Name())
			}
		}
		if links, _ := os.ReadDir(filepath.Join(n.bpfRoot, "links")); len(links) != 0 {
			t.Errorf("links pinned after the deletes: %v", links)
		}
		if err := netnstest.Dial(pods["a"], ipB, 8080, denyTimeout); err == nil {
			t.Error("a reaches b after both endpoints were deleted")
		}
	})
}
