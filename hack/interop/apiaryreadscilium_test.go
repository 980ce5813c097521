package interop_test

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cmstore "github.com/cilium/cilium/pkg/clustermesh/store"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/hack/interop"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// TestApiaryReadsCilium has Cilium's own writers publish cluster
// cilium1 (id 2) and reads it with apiary's code as a cluster meshing
// with it would: the cluster config, the sync canaries apiary's
// sync-mode watch store manager waits for, and every node, ipcache entry
// and identity through apiary's decoders, each carrying cilium1.
func TestApiaryReadsCilium(t *testing.T) {
	srv := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	want := interop.ExampleCiliumCluster("cilium1", 2)
	interop.PublishCiliumCluster(t, srv, want)
	b := srv.NewBackend()
	ctx := context.Background()
	remote := cluster.Info{ClusterName: "cilium1", ClusterID: 2, MaxConnectedClusters: 255}
	us := cluster.Info{ClusterName: "apiary1", ClusterID: 7, MaxConnectedClusters: 255}

	t.Run("cluster config", func(t *testing.T) {
		v, err := b.Get(ctx, layout.ClusterConfigKey("cilium1"))
		if err != nil {
			t.Fatal(err)
		}
		var cfg cluster.CiliumClusterConfig
		if err := json.Unmarshal(v, &cfg); err != nil {
			t.Fatalf("decode %s: %v", v, err)
		}
		if cfg.ID != 2 || !cfg.Capabilities.SyncedCanaries || cfg.Capabilities.MaxConnectedClusters != 255 {
			t.Errorf("cluster config = %s", v)
		}
		if err := us.ValidateRemote("cilium1", cfg.ID); err != nil {
			t.Errorf("apiary1 refuses cilium1: %v", err)
		}
	})

	t.Run("sync canaries", func(t *testing.T) {
		mgr := store.NewWatchStoreManagerSync(b, "cilium1", celltest.Logger(t))
		var mu sync.Mutex
		var started []string
		for _, prefix := range []string{"cilium/state/nodes/v1", "cilium/state/ip/v1", "cilium/state/identities/v1", "cilium/state/services/v1"} {
			mgr.Register(prefix, func(context.Context) { mu.Lock(); started = append(started, prefix); mu.Unlock() })
		}
		runCtx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { mgr.Run(runCtx) })
		defer func() { cancel(); wg.Wait() }()
		celltest.Eventually(t, "every watcher started by its canary", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(started) == 4
		})
	})

	t.Run("nodes", func(t *testing.T) {
		kvs := listPrefix(t, b, "cilium/state/nodes/v1/cilium1/")
		if len(kvs) != len(want.Nodes) {
			t.Fatalf("%d nodes, want %d", len(kvs), len(want.Nodes))
		}
		for _, w := range want.Nodes {
			var n node.Node
			if err := n.UnmarshalJSON(kvs[w.Name]); err != nil {
				t.Fatalf("decode node %s: %v", w.Name, err)
			}
			if n.Cluster != "cilium1" || n.ClusterID != 2 || n.Name != w.Name ||
				n.PrimaryIP(false).String() != w.GetNodeIP(false).String() || n.IPv4AllocCIDR.String() != w.IPv4AllocCIDR.String() {
				t.Errorf("node %s decoded as %+v", w.Name, n)
			}
		}
	})

	t.Run("ipcache", func(t *testing.T) {
		kvs := listPrefix(t, b, "cilium/state/ip/v1/default/")
		if len(kvs) != len(want.Endpoints) {
			t.Fatalf("%d entries, want %d", len(kvs), len(want.Endpoints))
		}
		for _, w := range want.Endpoints {
			name := w.IP.String()
			p, err := ipcache.DecodeIPIdentityPair(name, kvs[name])
			if err != nil {
				t.Fatalf("decode %s: %v", name, err)
			}
			if got := identity.ClusterIDOf(remote, p.ID); got != 2 {
				t.Errorf("%s: identity %d is of cluster id %d, want 2", name, p.ID, got)
			}
			ports := make([]string, 0, len(p.NamedPorts))
			for _, np := range p.NamedPorts {
				ports = append(ports, np.Name+"="+strconv.Itoa(int(np.Port))+"/"+string(np.Protocol))
			}
			wantPorts := make([]string, 0, len(w.NamedPorts))
			for _, np := range w.NamedPorts {
				wantPorts = append(wantPorts, np.Name+"="+strconv.Itoa(int(np.Port))+"/"+np.Protocol)
			}
			host, _ := p.HostAddr()
			if uint32(p.ID) != uint32(w.ID) || !net.IP(host.AsSlice()).Equal(w.HostIP) || p.K8sNamespace != w.K8sNamespace ||
				p.K8sPodName != w.K8sPodName || p.K8sServiceAccount != w.K8sServiceAccount || !slices.Equal(ports, wantPorts) {
				t.Errorf("%s decoded as %+v", name, p)
			}
			if again, _ := p.Marshal(); string(again) != string(kvs[name]) {
				t.Errorf("%s: apiary encodes it as\n%s\nCilium wrote\n%s", name, again, kvs[name])
			}
		}
	})

	t.Run("identities", func(t *testing.T) {
		kvs := listPrefix(t, b, "cilium/state/identities/v1/id/")
		if len(kvs) != len(want.Identities) {
			t.Fatalf("%d identities, want %d", len(kvs), len(want.Identities))
		}
		for id, lbls := range want.Identities {
			v, ok := kvs[id.String()]
			if !ok {
				t.Fatalf("identity %d missing", id)
			}
			got, err := identitycache.DecodeKVStoreIdentity(remote, uint64(id), string(v))
			if err != nil {
				t.Fatalf("decode identity %d %q: %v", id, v, err)
			}
			var gotLabels []string
			for _, l := range got.Labels {
				gotLabels = append(gotLabels, l.String())
			}
			slices.Sort(lbls)
			if strings.Join(gotLabels, ",") != strings.Join(lbls, ",") {
				t.Errorf("identity %d labels = %v, want %v", id, gotLabels, lbls)
			}
			if _, err := identitycache.DecodeKVStoreIdentity(us, uint64(id), string(v)); err == nil {
				t.Errorf("identity %d of cilium1 accepted as apiary1's", id)
			}
		}
	})

	t.Run("services", func(t *testing.T) {
		kvs := listPrefix(t, b, layout.ServicesClusterPrefix("cilium1")+"/")
		if len(kvs) != len(want.Services) {
			t.Fatalf("%d services, want %d", len(kvs), len(want.Services))
		}
		for _, w := range want.Services {
			name := w.Namespace + "/" + w.Name
			got, err := service.Decode(name, kvs[name])
			if err != nil {
				t.Fatalf("decode service %s: %v", name, err)
			}
			if err := got.CheckCluster(remote); err != nil {
				t.Errorf("service %s refused as cilium1's: %v", name, err)
			}
			if err := got.CheckCluster(us); err == nil {
				t.Errorf("service %s of cilium1 accepted as apiary1's", name)
			}
			if got.Cluster != w.Cluster || got.ClusterID != w.ClusterID || got.Shared != w.Shared ||
				got.IncludeExternal != w.IncludeExternal || render(got.Frontends) != renderCilium(w.Frontends) ||
				render(got.Backends) != renderCilium(w.Backends) || !maps.Equal(got.Selector, w.Selector) {
				t.Errorf("service %s decoded as %+v, Cilium wrote %s", name, got, kvs[name])
			}
		}
	})
}

// render is apiary's frontends or backends as sorted
// "<ip>:<port>/<protocol>(<name>)".
func render(m map[string]service.PortConfiguration) string {
	var out []string
	for ip, pc := range m {
		for name, p := range pc {
			out = append(out, ip+":"+strconv.Itoa(int(p.Port))+"/"+p.Protocol+"("+name+")")
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// renderCilium is render of Cilium's frontends or backends.
func renderCilium(m map[string]cmstore.PortConfiguration) string {
	var out []string
	for ip, pc := range m {
		for name, p := range pc {
			out = append(out, ip+":"+strconv.Itoa(int(p.Port))+"/"+string(p.Protocol)+"("+name+")")
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// TestApiaryAgentJoinsCiliumCluster runs a whole apiary agent as one
// more node of the cluster Cilium's writers published: its own
// watchers (nodes, ipcache, identities, with their checks) take in every
// entry, with the pods' named ports and service accounts, and skip none.
func TestApiaryAgentJoinsCiliumCluster(t *testing.T) {
	srv := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	want := interop.ExampleCiliumCluster("cilium1", 2)
	interop.PublishCiliumCluster(t, srv, want)
	a := interop.StartApiaryAgent(t, srv, "cilium1", 2, "apiary-node", "192.0.2.50")

	celltest.EventuallyWithin(t, "Cilium's nodes in apiary's node manager", 30*time.Second, func() bool {
		var names []string
		for _, n := range a.Nodes.Nodes() {
			if n.Cluster == "cilium1" && n.Source == "kvstore" {
				names = append(names, n.Name)
			}
		}
		slices.Sort(names)
		return slices.Equal(names, []string{"worker-1", "worker-2"})
	})
	for _, w := range want.Endpoints {
		prefix := netip.PrefixFrom(netip.MustParseAddr(w.IP.String()), 32)
		celltest.EventuallyWithin(t, prefix.String()+" in apiary's ipcache", 30*time.Second, func() bool {
			e, ok := a.IPC.Lookup(prefix)
			return ok && uint32(e.Identity) == uint32(w.ID) && e.TunnelPeer.String() == w.HostIP.String() &&
				e.K8sPodName == w.K8sPodName && e.K8sServiceAccount == w.K8sServiceAccount && len(e.NamedPorts) == len(w.NamedPorts)
		})
	}
	for id, lbls := range want.Identities {
		celltest.EventuallyWithin(t, "identity "+id.String()+" in apiary's identity cache", 30*time.Second, func() bool {
			got := a.Alloc.LookupIdentityByID(identity.NumericIdentity(id))
			return got != nil && len(got.Labels) == len(lbls)
		})
	}
	for _, line := range []string{"Nodes", "IPCache", "Identities"} {
		if r := a.Status(t, line); r.State != status.Ok {
			t.Errorf("%s: %s %q %q", line, r.State, r.Message, r.Details)
		} else {
			t.Logf("%s: %s %s %q", line, r.State, r.Message, r.Details)
		}
	}
}

// strangerToEmployeeHTTP lets strangers reach the port the employee pods
// call http.
const strangerToEmployeeHTTP = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: strangers-to-http, namespace: istio-space}
spec:
  endpointSelector: {matchLabels: {app: stranger}}
  egress:
  - toEndpoints: [{matchLabels: {app: employee}}]
    toPorts: [{ports: [{port: http, protocol: TCP}]}]
`

// TestNamedPortsFromCilium: an egress rule with a named port resolves
// to the number a pod's IPIdentityPair, written by Cilium, gives it.
func TestNamedPortsFromCilium(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	want := interop.ExampleCiliumCluster("cilium1", 2)
	interop.PublishCiliumCluster(t, srv, want)
	a := interop.StartApiaryAgent(t, srv, "cilium1", 2, "apiary-node", "192.0.2.50")
	if _, err := a.Client.PolicyPut(t.Context(), []byte(strangerToEmployeeHTTP)); err != nil {
		t.Fatal(err)
	}
	allowed := func(dport string) func() bool {
		return func() bool {
			tr, err := a.Client.PolicyTrace(t.Context(), models.PolicyTraceRequest{
				Source: []string{"istio-space/stranger-0"}, Destination: []string{"istio-space/employee-0"}, DPort: dport})
			return err == nil && tr.Egress.Allowed
		}
	}
	celltest.EventuallyWithin(t, "stranger -> employee 8080/TCP (employee's http) allowed", 30*time.Second, allowed("8080/TCP"))
	for _, dport := range []string{"80/TCP", "8080/UDP"} {
		if allowed(dport)() {
			t.Errorf("stranger -> employee %s allowed; only the http port (8080/TCP) should be", dport)
		}
	}
}

func listPrefix(t *testing.T, b kvstore.Backend, prefix string) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kvs, err := b.ListPrefix(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for k, v := range kvs {
		out[strings.TrimPrefix(k, prefix)] = v.Data
	}
	return out
}
