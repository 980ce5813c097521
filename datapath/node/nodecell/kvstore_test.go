package nodecell_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/labels"
)

// agent is one agent's control plane against a real etcd: kvstore,
// identities, ipcache and node manager.
type agent struct {
	hive      *hive.Hive
	nodes     node.Manager
	ipc       ipcache.IPCache
	alloc     identity.Allocator
	local     localnode.Store
	providers statusProviders
}

type statusProviders struct {
	cell.In

	All []status.Provider `group:"status-providers"`
}

func (a *agent) probe(t *testing.T, name string) status.Report {
	t.Helper()
	for _, p := range a.providers.All {
		if p.Name == name {
			return p.Probe(context.Background())
		}
	}
	t.Fatalf("no status line %q", name)
	return status.Report{}
}

// startAgent starts an agent on srv; flags add to the kvstore flags.
func startAgent(t *testing.T, srv *kvstoretest.Server, flags ...string) *agent {
	t.Helper()
	a := &agent{}
	a.hive = celltest.StartWithFlags(t, append([]string{
		"kvstore=etcd", "kvstore-opt=etcd.address=" + srv.Endpoint(), "kvstore-heartbeat-writer=false",
	}, flags...),
		kvstorecell.Cell, store.Cell, localnode.Cell, identitycell.Cell, ipcachecell.Cell, nodecell.Cell,
		celltest.Capture(&a.nodes), celltest.Capture(&a.ipc), celltest.Capture(&a.alloc), celltest.Capture(&a.local),
		cell.Invoke(func(p statusProviders) { a.providers = p }))
	return a
}

func nodeNames(m node.Manager) string {
	var names []string
	for _, n := range m.Nodes() {
		names = append(names, n.GetKeyName()+"("+string(n.Source)+")")
	}
	return strings.Join(names, " ")
}

func TestLocalNodeIsRegistered(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	startAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24,fd00:1::/64")
	want, err := os.ReadFile(filepath.Join("..", "testdata", "node-local.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw := srv.Client()
	celltest.EventuallyWithin(t, "the node key", 20*time.Second, func() bool {
		resp, err := raw.Get(context.Background(), "cilium/state/nodes/v1/default/node-a")
		return err == nil && len(resp.Kvs) == 1 && string(resp.Kvs[0].Value) == string(want) && resp.Kvs[0].Lease != 0
	})
	celltest.EventuallyWithin(t, "the sync canary", 20*time.Second, func() bool {
		resp, err := raw.Get(context.Background(), "cilium/synced/default/cilium/state/nodes/v1")
		return err == nil && len(resp.Kvs) == 1
	})
}

func TestClusterNodesAreWatched(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	ctx := context.Background()
	put := func(name, value string) {
		t.Helper()
		if _, err := raw.Put(ctx, "cilium/state/nodes/v1/default/"+name, value); err != nil {
			t.Fatal(err)
		}
	}
	kind, err := os.ReadFile(filepath.Join("..", "testdata", "cilium-node-kind.json"))
	if err != nil {
		t.Fatal(err)
	}
	put("kind-worker", string(kind))
	put("broken", `{"Name":"broken","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":"10.0.0.300"}]}`)
	a := startAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.10")
	celltest.EventuallyWithin(t, "kind-worker", 20*time.Second, func() bool {
		return nodeNames(a.nodes) == "default/kind-worker(kvstore) default/node-a(local)"
	})
	// The node manager hands a node's addresses to the ipcache after it
	// lists the node: wait for the entries themselves.
	waitEntries(t, a.ipc, map[string]string{
		"172.18.0.3":            "6/kvstore via 172.18.0.3",
		"fc00:f853:ccd:e793::3": "6/kvstore via 172.18.0.3",
		"10.244.1.152":          "6/kvstore via 172.18.0.3",
		"10.244.1.45":           "4/kvstore via 172.18.0.3",
		"fd00:10:244:1::a4f2":   "4/kvstore via 172.18.0.3",
		"192.0.2.10":            "1/local",
	})
	// Pods of kind-worker the ipcache has no entry of fall back to its pod
	// CIDRs: a CIDR identity with the node as tunnel peer, as Cilium's.
	for _, ip := range []string{"10.244.1.77", "fd00:10:244:1::77"} {
		var e ipcache.Entry
		celltest.EventuallyWithin(t, "the pod CIDR fallback of "+ip, 20*time.Second, func() bool {
			var ok bool
			e, ok = a.ipc.LookupByIP(netip.MustParseAddr(ip))
			return ok && e.Prefix.Bits() < e.Prefix.Addr().BitLen()
		})
		if e.TunnelPeer.String() != "172.18.0.3" || e.Identity.Scope() != identity.ScopeLocal || e.Source != "kvstore" {
			t.Errorf("%s falls back to %s: identity %d, peer %s, source %s; want a CIDR identity via 172.18.0.3 from kvstore",
				ip, e.Prefix, e.Identity, e.TunnelPeer, e.Source)
		}
	}
	if e, ok := a.ipc.LookupByIP(netip.MustParseAddr("10.244.7.1")); ok {
		t.Errorf("10.244.7.1 (no node's pod CIDR, not the local node's) has an entry: %+v", e)
	}

	put("node-x", `{"Name":"node-y","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":"192.0.2.60"}]}`)
	put("node-z", `{"Name":"node-z","Cluster":"other","IPAddresses":[{"Type":"InternalIP","IP":"192.0.2.61"}]}`)
	put("node-w", `{"Name":"node-w","Cluster":"default","ClusterID":9,"IPAddresses":[{"Type":"InternalIP","IP":"192.0.2.62"}]}`)
	put("node-a", `{"Name":"node-a","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":"192.0.2.99"}],"Source":"local"}`)
	put("node-b", `{"Name":"node-b","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":"192.0.2.20"}],"Source":"local"}`)
	celltest.EventuallyWithin(t, "node-b", 20*time.Second, func() bool {
		return nodeNames(a.nodes) == "default/kind-worker(kvstore) default/node-a(local) default/node-b(kvstore)"
	})
	if got := a.nodes.LocalNode().TunnelIP().String(); got != "192.0.2.10" {
		t.Errorf("local node IP = %s after someone wrote its key: the local source must win", got)
	}

	// node-a is this agent's own key: written again, and the other value
	// reported as a registration conflict.
	const wantLine = "3 nodes (1 local, 2 remote), 4 kvstore entries skipped, node name also registered by 192.0.2.99"
	celltest.EventuallyWithin(t, "the Nodes line", 20*time.Second, func() bool { return a.probe(t, "Nodes").Message == wantLine })
	celltest.EventuallyWithin(t, "node-a's own key back", 20*time.Second, func() bool {
		resp, err := raw.Get(ctx, "cilium/state/nodes/v1/default/node-a")
		return err == nil && len(resp.Kvs) == 1 && strings.Contains(string(resp.Kvs[0].Value), "192.0.2.10")
	})
	line := a.probe(t, "Nodes")
	if line.State != status.Warning {
		t.Errorf("Nodes line = %s %q", line.State, line.Message)
	}
	details := strings.Join(line.Details, "\n")
	for _, want := range []string{
		"kvstore: cilium/state/nodes/v1/default/ listed, local node registered under cilium/state/nodes/v1/default/node-a",
		"skipped 2 malformed nodes and refused 2 of another cluster",
	} {
		if !strings.Contains(details, want) {
			t.Errorf("details %q lack %q", details, want)
		}
	}

	if _, err := raw.Delete(ctx, "cilium/state/nodes/v1/default/kind-worker"); err != nil {
		t.Fatal(err)
	}
	celltest.EventuallyWithin(t, "kind-worker deleted", 20*time.Second, func() bool {
		return nodeNames(a.nodes) == "default/node-a(local) default/node-b(kvstore)"
	})
	waitEntries(t, a.ipc, map[string]string{"172.18.0.3": "none", "10.244.1.45": "none"})
}

// TestTwoAgents runs two agents against one etcd: each sees the other's
// node and endpoints, and when one stops, what it published goes away
// with its lease.
func TestTwoAgents(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a := startAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24")
	b := startAgent(t, srv, "node-name=node-b", "node-ip=192.0.2.20", "pod-cidr=10.0.2.0/24", "kvstore-lease-ttl=5s")
	ctx := context.Background()

	for _, ag := range []*agent{a, b} {
		celltest.EventuallyWithin(t, "both nodes", 20*time.Second, func() bool {
			return nodeNames(ag.nodes) == "default/node-a(local) default/node-b(kvstore)" ||
				nodeNames(ag.nodes) == "default/node-a(kvstore) default/node-b(local)"
		})
	}
	web, _, err := b.alloc.AllocateIdentity(ctx, labels.MustParseList("k8s:app=web", "k8s:io.kubernetes.pod.namespace=default"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ipc.UpsertLocalEndpoint(ipcache.LocalEndpoint{
		IP: netip.MustParseAddr("10.0.2.5"), Identity: web.ID, EndpointID: 7, K8sNamespace: "default", K8sPodName: "web-1",
	}); err != nil {
		t.Fatal(err)
	}
	wantEP := web.ID.String() + "/kvstore via 192.0.2.20"
	celltest.EventuallyWithin(t, "node-b's endpoint in node-a's ipcache", 20*time.Second, func() bool {
		return entry(a.ipc, "10.0.2.5") == wantEP
	})
	if got := entry(b.ipc, "10.0.2.5"); got != web.ID.String()+"/local" {
		t.Errorf("node-b's own endpoint = %s, want local (its kvstore copy is ignored)", got)
	}
	if got := entry(a.ipc, "192.0.2.20") + " " + entry(b.ipc, "192.0.2.10"); got != "6/kvstore via 192.0.2.20 6/kvstore via 192.0.2.10" {
		t.Errorf("each other's node IP: %s", got)
	}
	if line := a.probe(t, "Nodes"); line.State != status.Ok || line.Message != "2 nodes (1 local, 1 remote)" {
		t.Errorf("Nodes line = %s %q", line.State, line.Message)
	}

	// node-b stops without deleting anything, as a crashed agent would;
	// its keys expire with its 5s lease.
	stopped := time.Now()
	if err := b.hive.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	celltest.EventuallyWithin(t, "node-b gone from node-a", 30*time.Second, func() bool {
		return nodeNames(a.nodes) == "default/node-a(local)"
	})
	if waited := time.Since(stopped); waited < 4*time.Second {
		t.Errorf("node-b vanished %s after it stopped, before its lease could expire", waited)
	}
	celltest.EventuallyWithin(t, "node-b's entries gone from node-a's ipcache", 10*time.Second, func() bool {
		return entry(a.ipc, "10.0.2.5") == "none" && entry(a.ipc, "192.0.2.20") == "none"
	})
}

// TestLocalNodeChangeIsRegistered: pod CIDRs given to the local node
// after start (as --ipam=kubernetes does when the Node's spec.podCIDRs
// arrives) reach the manager, the handlers and the kvstore key at once,
// without a restart.
func TestLocalNodeChangeIsRegistered(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a := startAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.10")
	raw := srv.Client()
	key := "cilium/state/nodes/v1/default/node-a"
	value := func() string {
		resp, err := raw.Get(context.Background(), key)
		if err != nil || len(resp.Kvs) != 1 {
			return ""
		}
		return string(resp.Kvs[0].Value)
	}
	celltest.EventuallyWithin(t, "the node key", 20*time.Second, func() bool { return value() != "" })
	if strings.Contains(value(), "10.0.7.0/24") {
		t.Fatalf("the key has a pod CIDR before one is given: %s", value())
	}
	a.local.Update(func(n *localnode.LocalNode) {
		n.IPv4AllocCIDR = netip.MustParsePrefix("10.0.7.0/24")
		n.IPv6AllocCIDR = netip.MustParsePrefix("fd00:7::/64")
	})
	celltest.EventuallyWithin(t, "the node key with the pod CIDRs", 20*time.Second, func() bool {
		v := value()
		return strings.Contains(v, `"IPv4AllocCIDR":{"IP":"10.0.7.0","Mask":"////AA=="}`) && strings.Contains(v, `"IPv6AllocCIDR":{"IP":"fd00:7::"`)
	})
	n := a.nodes.LocalNode()
	if n.IPv4AllocCIDR.String() != "10.0.7.0/24" || n.IPv6AllocCIDR.String() != "fd00:7::/64" {
		t.Errorf("LocalNode() has pod CIDRs %s, %s", n.IPv4AllocCIDR, n.IPv6AllocCIDR)
	}
	got, ok := a.nodes.GetNode(node.Identity{Cluster: "default", Name: "node-a"})
	if !ok || got.IPv4AllocCIDR != n.IPv4AllocCIDR {
		t.Errorf("the manager's node-a: %+v (found %v)", got, ok)
	}
}
