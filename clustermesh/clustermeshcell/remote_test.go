package clustermeshcell_test

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// rawRemote is a remote cluster whose etcd the test writes directly, as
// a remote agent (or Cilium) would.
type rawRemote struct{ *meshCluster }

func (r rawRemote) node(t *testing.T, name, ip string) {
	t.Helper()
	n := node.Node{Name: name, Cluster: r.name, ClusterID: r.id,
		IPAddresses: []node.Address{{Type: node.NodeInternalIP, IP: netip.MustParseAddr(ip)}}}
	data, err := n.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	r.put(t, layout.NodeKey(r.name, name), string(data))
}

func (r rawRemote) identity(t *testing.T, id uint32, app string) {
	t.Helper()
	r.put(t, fmt.Sprintf("cilium/state/identities/v1/id/%d", id),
		fmt.Sprintf("k8s:app=%s;k8s:io.cilium.k8s.policy.cluster=%s;k8s:io.kubernetes.pod.namespace=default;", app, r.name))
}

func (r rawRemote) endpoint(t *testing.T, ip string, id uint32) {
	t.Helper()
	r.put(t, "cilium/state/ip/v1/default/"+ip, fmt.Sprintf(
		`{"IP":%q,"Mask":null,"HostIP":"203.0.113.1","ID":%d,"Key":0,"Metadata":"cilium-global:%s:n1:1","K8sNamespace":"default","K8sPodName":"p-%s"}`,
		ip, id, r.name, ip))
}

// TestImmediateModeReconnectAndSwap: a remote without sync canaries
// (immediate mode) syncs; malformed and refused entries are skipped and
// counted while the rest syncs; after a partition and an etcd restart
// with changes made meanwhile, the caches equal the remote's content
// exactly; a Kubernetes-style ..data symlink swap of the config moves
// the connection to another etcd.
func TestImmediateModeReconnectAndSwap(t *testing.T) {
	c1 := newCluster(t, "cluster1", 1)
	r5 := rawRemote{newCluster(t, "cluster5", 5)}
	r5.put(t, "cilium/cluster-config/cluster5", `{"id":5}`) // no capabilities: immediate mode, 255 clusters
	base := uint32(5<<16 + 256)                             // cluster 5's first global identity is base+1
	r5.node(t, "n1", "203.0.113.1")
	r5.node(t, "n2", "203.0.113.2")
	r5.put(t, layout.NodeKey("cluster5", "bad"), "{")                                                                // malformed
	r5.put(t, layout.NodeKey("cluster5", "n9"), `{"Name":"n9","Cluster":"cluster6","ClusterID":6,"IPAddresses":[]}`) // refused
	r5.identity(t, base+1, "web")
	r5.identity(t, base+2, "db")
	r5.identity(t, 2<<16+7, "other")                             // another cluster's range: refused
	r5.put(t, "cilium/state/identities/v1/id/abc", "k8s:app=x;") // malformed
	r5.endpoint(t, "10.5.0.1", base+1)
	r5.endpoint(t, "10.5.0.2", base+2)
	r5.endpoint(t, "10.5.0.9", 3<<16+1) // identity of cluster 3: refused

	// The Kubernetes layout of a mounted secret: <dir>/cluster5 ->
	// ..data/cluster5, ..data -> ..<timestamp>.
	dir := c1.meshDir
	cfgA := r5.meshConfig(t, dir)
	k8sMount(t, dir, "..2026_11_23_a", "..data", map[string]string{"cluster5": cfgA})
	if err := os.Symlink("..data/cluster5", filepath.Join(dir, "cluster5")); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, c1, "node-a1", "192.0.2.11")

	r := a.waitRemote(t, "cluster5", "ready in immediate mode", func(r models.RemoteCluster) bool { return r.Ready })
	if r.Config.SyncedCanaries || r.Nodes != 2 || r.Identities != 2 || r.Endpoints != 2 {
		t.Errorf("cluster5 = %+v, want immediate mode with 2 nodes, 2 identities, 2 endpoints", r)
	}
	skipped := map[string]string{}
	for _, p := range r.Prefixes {
		skipped[p.Prefix] = fmt.Sprintf("%d/%d", p.Malformed, p.Refused)
		if p.Canary != "" || !p.Synced {
			t.Errorf("prefix %+v, want synced without canary", p)
		}
	}
	want := map[string]string{
		"cilium/state/nodes/v1/cluster5": "1/1", "cilium/state/ip/v1/default": "0/1", "cilium/state/identities/v1/id": "1/1",
		"cilium/state/services/v1/cluster5": "0/0",
	}
	if fmt.Sprint(skipped) != fmt.Sprint(want) {
		t.Errorf("skipped malformed/refused per prefix = %v, want %v", skipped, want)
	}
	if got := a.clusterEntries(); joined(got) != fmt.Sprintf("10.5.0.1/32=%d,10.5.0.2/32=%d", base+1, base+2) {
		t.Errorf("clustermesh ipcache entries = %v", got)
	}

	t.Run("reconnect after partition and restart", func(t *testing.T) {
		r5.srv.Partition()
		a.waitRemote(t, "cluster5", "disconnected", func(r models.RemoteCluster) bool { return !r.Connected })
		// Cached entries stay while disconnected.
		if got := joined(a.clusterNodes("cluster5")); got != "n1/clustermesh,n2/clustermesh" {
			t.Errorf("nodes while disconnected = %s, want the cached ones", got)
		}
		// Changes made meanwhile, behind the agent's back.
		r5.del(t, layout.NodeKey("cluster5", "n2"))
		r5.node(t, "n3", "203.0.113.3")
		r5.del(t, "cilium/state/ip/v1/default/10.5.0.2")
		r5.endpoint(t, "10.5.0.3", base+1)
		r5.del(t, fmt.Sprintf("cilium/state/identities/v1/id/%d", base+2))
		r5.srv.Restart() // also heals the partition
		celltest.EventuallyWithin(t, "caches equal the remote", 60e9, func() bool {
			return joined(a.clusterNodes("cluster5")) == "n1/clustermesh,n3/clustermesh" &&
				joined(a.clusterEntries()) == fmt.Sprintf("10.5.0.1/32=%d,10.5.0.3/32=%d", base+1, base+1) &&
				a.alloc.LookupIdentityByID(identityID(base+2)) == nil && a.alloc.LookupIdentityByID(identityID(base+1)) != nil
		})
		r := a.waitRemote(t, "cluster5", "ready again", func(r models.RemoteCluster) bool { return r.Ready && r.Connected })
		if r.Failures == 0 {
			t.Errorf("cluster5 = %+v, want the lost connection counted", r)
		}
	})

	t.Run("symlink swap moves the connection", func(t *testing.T) {
		r6 := rawRemote{newCluster(t, "cluster5", 5)} // cluster5's etcd, migrated
		r6.put(t, "cilium/cluster-config/cluster5", `{"id":5}`)
		r6.node(t, "m1", "203.0.113.11")
		cfgB, err := os.ReadFile(r6.srv.WriteConfigFile()) // absolute TLS paths
		if err != nil {
			t.Fatal(err)
		}
		k8sMount(t, dir, "..2026_11_23_b", "..data", map[string]string{"cluster5": string(cfgB)})
		celltest.EventuallyWithin(t, "cluster5's nodes from the new etcd", 60e9, func() bool {
			return joined(a.clusterNodes("cluster5")) == "m1/clustermesh" && len(a.clusterEntries()) == 0
		})
		if r := a.waitRemote(t, "cluster5", "ready", func(r models.RemoteCluster) bool { return r.Ready }); !strings.Contains(r.Etcd, r6.srv.Endpoint()) {
			t.Errorf("cluster5 etcd = %q, want %s", r.Etcd, r6.srv.Endpoint())
		}

		t.Run("a changed cluster id withdraws what the old id brought", func(t *testing.T) {
			r6.put(t, "cilium/cluster-config/cluster5", `{"id":7}`)
			r7 := rawRemote{&meshCluster{name: "cluster5", id: 7, srv: r6.srv}}
			r7.node(t, "m7", "203.0.113.17")
			// The same config again, in a new mount: the file changed, so
			// the connection restarts and reads the new id.
			k8sMount(t, dir, "..2026_11_23_c", "..data", map[string]string{"cluster5": string(cfgB) + "# rotated\n"})
			celltest.EventuallyWithin(t, "only the node of cluster id 7", 60e9, func() bool {
				return joined(a.clusterNodes("cluster5")) == "m7/clustermesh"
			})
			r := a.waitRemote(t, "cluster5", "ready with id 7", func(r models.RemoteCluster) bool { return r.Ready && r.Config.ClusterID == 7 })
			if r.Prefixes[0].Refused != 1 {
				t.Errorf("nodes prefix = %+v, want m1 (cluster id 5) refused", r.Prefixes[0])
			}
		})
	})
}

// k8sMount writes files into a new timestamped directory under dir and
// swaps the link (..data) to it atomically, as the kubelet updates a
// mounted secret.
func k8sMount(t *testing.T, dir, stamp, link string, files map[string]string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, stamp), 0o755); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		celltest.ReplaceFile(t, filepath.Join(dir, stamp, name), files[name])
	}
	tmp := filepath.Join(dir, link+"_tmp")
	if err := os.Symlink(stamp, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, link)); err != nil {
		t.Fatal(err)
	}
}

// TestCachedRemote: a remote served by a KVStoreMesh cache
// (capabilities.cached) is read at cilium/cache/<kind>/v1/<cluster>,
// gated by the canaries of those prefixes.
func TestCachedRemote(t *testing.T) {
	c1 := newCluster(t, "cluster1", 1)
	r5 := rawRemote{newCluster(t, "cluster5", 5)}
	r5.put(t, "cilium/cluster-config/cluster5", `{"id":5,"capabilities":{"syncedCanaries":true,"maxConnectedClusters":255,"cached":true}}`)
	base := uint32(5<<16 + 256)
	n := node.Node{Name: "n1", Cluster: "cluster5", ClusterID: 5,
		IPAddresses: []node.Address{{Type: node.NodeInternalIP, IP: netip.MustParseAddr("203.0.113.1")}}}
	data, err := n.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	r5.put(t, "cilium/cache/nodes/v1/cluster5/n1", string(data))
	r5.put(t, fmt.Sprintf("cilium/cache/identities/v1/cluster5/id/%d", base+1), "k8s:app=web;k8s:io.cilium.k8s.policy.cluster=cluster5;")
	r5.put(t, "cilium/cache/ip/v1/cluster5/10.5.0.1", fmt.Sprintf(
		`{"IP":"10.5.0.1","Mask":null,"HostIP":"203.0.113.1","ID":%d,"Key":0,"Metadata":"","K8sNamespace":"default","K8sPodName":"web-0"}`, base+1))
	// State keys a cache does not serve: not read.
	r5.node(t, "stale", "203.0.113.9")
	c1.writeMeshConfig(t, r5.meshCluster)
	a := startAgent(t, c1, "node-a1", "192.0.2.11")

	r := a.waitRemote(t, "cluster5", "waiting for the cache's node canary", func(r models.RemoteCluster) bool {
		return r.Status == "waiting for sync canary of cilium/cache/nodes/v1"
	})
	if !r.Config.Cached {
		t.Errorf("config = %+v, want cached", r.Config)
	}
	for _, p := range []string{"nodes", "ip", "identities", "services"} {
		r5.put(t, "cilium/synced/cluster5/cilium/cache/"+p+"/v1", "2026-11-23T10:00:00Z")
	}
	r = a.waitRemote(t, "cluster5", "ready", func(r models.RemoteCluster) bool { return r.Ready })
	if got := joined(a.clusterNodes("cluster5")); got != "n1/clustermesh" {
		t.Errorf("nodes = %s, want n1 only", got)
	}
	want := fmt.Sprintf("%d/clustermesh", base+1)
	celltest.Eventually(t, "ipcache 10.5.0.1 = "+want, func() bool { return a.entry("10.5.0.1") == want })
	if a.alloc.LookupIdentityByID(identityID(base+1)) == nil {
		t.Errorf("identity %d unknown", base+1)
	}
	var prefixes []string
	for _, p := range r.Prefixes {
		prefixes = append(prefixes, p.Prefix)
	}
	if got := joined(prefixes); got != "cilium/cache/nodes/v1/cluster5,cilium/cache/ip/v1/cluster5,cilium/cache/identities/v1/cluster5/id,cilium/cache/services/v1/cluster5" {
		t.Errorf("prefixes = %s", got)
	}
}
