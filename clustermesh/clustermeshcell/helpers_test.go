package clustermeshcell_test

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh/clustermeshcell"
	"github.com/apiary-net/apiary/clustermesh/remote"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policycell"
)

// testRemoteOptions shorten the remote connections' timings. A status
// probe gets half of ConnectTimeout: 3s, so that on a loaded machine
// (parallel -race tests) the first TLS connection to a healthy remote
// does not fail (which TestTwoClusters would see as a failure).
var testRemoteOptions = remote.Options{
	ConnectTimeout: 6 * time.Second, ConfigTimeout: 2 * time.Second, StatusInterval: 200 * time.Millisecond,
	RetryBase: 200 * time.Millisecond, HeartbeatTimeout: -1,
}

// meshCluster is one cluster: its own etcd (TLS, client certificates)
// and its mesh config directory.
type meshCluster struct {
	name    string
	id      uint32
	srv     *kvstoretest.Server
	meshDir string
}

func newCluster(t *testing.T, name string, id uint32) *meshCluster {
	t.Helper()
	c := &meshCluster{name: name, id: id, srv: kvstoretest.StartServer(t, kvstoretest.WithTLS()), meshDir: t.TempDir()}
	return c
}

// put writes a key directly into the cluster's etcd.
func (c *meshCluster) put(t *testing.T, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.srv.Client().Put(ctx, key, value); err != nil {
		t.Fatal(err)
	}
}

func (c *meshCluster) del(t *testing.T, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.srv.Client().Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
}

// publishClusterConfig writes cilium/cluster-config/<name> as Cilium's
// publisher does, and the sync canaries when canaries is true.
func (c *meshCluster) publishClusterConfig(t *testing.T, canaries bool) {
	t.Helper()
	c.put(t, "cilium/cluster-config/"+c.name,
		fmt.Sprintf(`{"id":%d,"capabilities":{"syncedCanaries":%t,"maxConnectedClusters":255}}`, c.id, canaries))
	if canaries {
		for _, p := range []string{layout.CanaryNodes, layout.CanaryIPCache, layout.CanaryIdentities, layout.CanaryServices} {
			c.put(t, "cilium/synced/"+c.name+"/"+p, time.Now().UTC().Format(time.RFC3339))
		}
	}
}

// writeMeshConfig writes the config file of remote into c's mesh dir,
// with TLS paths relative to the directory (the files are copied in).
func (c *meshCluster) writeMeshConfig(t *testing.T, remote *meshCluster) {
	t.Helper()
	celltest.ReplaceFile(t, filepath.Join(c.meshDir, remote.name), remote.meshConfig(t, c.meshDir))
}

// meshConfig returns the YAML of the cluster's config file, copying its
// TLS files into dir under <name>-ca.crt, <name>.crt, <name>.key.
func (c *meshCluster) meshConfig(t *testing.T, dir string) string {
	t.Helper()
	return c.srv.MeshConfig(dir, c.name)
}

// agent is one agent hive: it shares nothing with the others but etcd.
type agent struct {
	t      *testing.T
	c      *meshCluster
	client *client.Client
	alloc  identity.Allocator
	ipc    ipcache.IPCache
	nodes  node.Manager
	hive   interface{ Stop(context.Context) error }
	reg    metrics.Registry
}

// startAgent starts an agent of cluster c on its etcd, meshed through
// c.meshDir.
func startAgent(t *testing.T, c *meshCluster, nodeName, nodeIP string, extra ...cell.Cell) *agent {
	t.Helper()
	return startAgentWithFlags(t, c, nodeName, nodeIP, nil, extra...)
}

// startAgentWithFlags is startAgent with more flags.
func startAgentWithFlags(t *testing.T, c *meshCluster, nodeName, nodeIP string, flags []string, extra ...cell.Cell) *agent {
	t.Helper()
	a := &agent{t: t, c: c}
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	cells := []cell.Cell{
		api.Cell, status.Cell, metrics.Cell, controller.Cell, kvstorecell.Cell, store.Cell, localnode.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, nodecell.Cell, clustermeshcell.Cell,
		cell.Provide(func() remote.Options { return testRemoteOptions }),
		celltest.Capture(&a.alloc), celltest.Capture(&a.ipc), celltest.Capture(&a.nodes), celltest.Capture(&a.reg),
	}
	h := celltest.StartWithFlags(t, append([]string{
		"socket-path=" + socket, "kvstore=etcd", "kvstore-opt=etcd.config=" + c.srv.WriteConfigFile(),
		"cluster-name=" + c.name, fmt.Sprintf("cluster-id=%d", c.id),
		"node-name=" + nodeName, "node-ip=" + nodeIP, "clustermesh-config=" + c.meshDir,
	}, flags...), append(cells, extra...)...)
	a.hive = h
	a.client = client.New(socket)
	t.Cleanup(a.client.Close)
	return a
}

// pod allocates the identity of a pod and puts it in the ipcache as a
// local endpoint, which publishes it in the cluster's etcd.
func (a *agent) pod(ns, name, app, ip string) *identity.Identity {
	a.t.Helper()
	ls, err := labels.ParseList(labels.SourceK8s, "app="+app, labels.KeyPodNamespace+"="+ns)
	if err != nil {
		a.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, _, err := a.alloc.AllocateIdentity(ctx, ls)
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.ipc.UpsertLocalEndpoint(ipcache.LocalEndpoint{
		IP: netip.MustParseAddr(ip), Identity: id.ID, EndpointID: 1, K8sNamespace: ns, K8sPodName: name,
	}); err != nil {
		a.t.Fatal(err)
	}
	return id
}

// mesh returns GET /v1/cluster/mesh.
func (a *agent) mesh() models.ClusterMesh {
	a.t.Helper()
	var m models.ClusterMesh
	if _, err := a.client.Get(context.Background(), "/v1/cluster/mesh", &m); err != nil {
		a.t.Fatal(err)
	}
	return m
}

// remote returns the state of one remote cluster (zero when unknown).
func (a *agent) remote(name string) models.RemoteCluster {
	for _, c := range a.mesh().Clusters {
		if c.Name == name {
			return c
		}
	}
	return models.RemoteCluster{}
}

// waitRemote waits until cond holds for the remote cluster's state and
// returns it.
func (a *agent) waitRemote(t *testing.T, name, what string, cond func(models.RemoteCluster) bool) models.RemoteCluster {
	t.Helper()
	last := a.remote(name)
	deadline := time.Now().Add(30 * time.Second)
	for !cond(last) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %s; last state %+v", name, what, last)
		}
		time.Sleep(20 * time.Millisecond)
		last = a.remote(name)
	}
	return last
}

// hasNode reports whether the agent knows cluster/name with source src.
func (a *agent) hasNode(cluster, name string) (node.Node, bool) {
	return a.nodes.GetNode(node.Identity{Cluster: cluster, Name: name})
}

// entry describes the ipcache entry of ip as "id/source" ("" if none).
func (a *agent) entry(ip string) string {
	e, ok := a.ipc.Lookup(ipcache.HostPrefix(netip.MustParseAddr(ip)))
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d/%s", e.Identity, e.Source)
}

// clusterEntries lists the ipcache entries of pods of source
// clustermesh (not the remote nodes' addresses).
func (a *agent) clusterEntries() []string {
	var out []string
	for _, e := range a.ipc.Entries() {
		if e.Source == "clustermesh" && e.K8sPodName != "" {
			out = append(out, fmt.Sprintf("%s=%d", e.Prefix, e.Identity))
		}
	}
	return out
}

// clusterNodes lists the nodes of cluster.
func (a *agent) clusterNodes(cluster string) []string {
	var out []string
	for _, n := range a.nodes.Nodes() {
		if n.Cluster == cluster {
			out = append(out, n.Name+"/"+string(n.Source))
		}
	}
	return out
}

func joined(s []string) string { return strings.Join(s, ",") }

type netipAddr = netip.Addr

func parseAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func identityID(id uint32) identity.NumericIdentity { return identity.NumericIdentity(id) }

// metric returns the value of a gauge or counter with label
// target_cluster=cluster ("" for none), -1 when absent.
func (a *agent) metric(name, cluster string) float64 {
	a.t.Helper()
	families, err := a.reg.Gather()
	if err != nil {
		a.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "target_cluster" {
					got = l.GetValue()
				}
			}
			if got != cluster {
				continue
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}
