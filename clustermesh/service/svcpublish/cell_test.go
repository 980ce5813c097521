package svcpublish_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh/clustermeshcell"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/clustermesh/remote"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/clustermesh/service/svcpublish"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/policycell"
)

// rebelBase is a cluster's --lb-state-file: the global service
// rebel-base with extra annotations and the cluster's backends.
func rebelBase(clusterIP, annotations string, backends ...string) string {
	return fmt.Sprintf(`services:
- metadata:
    name: rebel-base
    namespace: default
    annotations: {service.cilium.io/global: "true"%s}
  spec:
    clusterIP: %s
    ports: [{name: http, port: 80}]
endpoints:
- metadata: {name: rebel-base-1, namespace: default, labels: {kubernetes.io/service-name: rebel-base}}
  addressType: IPv4
  ports: [{name: http, port: 80}]
  endpoints: [%s]
`, annotations, clusterIP, "{addresses: ["+strings.Join(backends, "]}, {addresses: [")+"]}")
}

// meshCluster is one cluster without Kubernetes: its etcd and its
// agent's state file.
type meshCluster struct {
	name string
	id   int
	etcd *kvstoretest.Server
	file string
}

func newCluster(t *testing.T, name string, id int) *meshCluster {
	return &meshCluster{name: name, id: id, etcd: kvstoretest.StartServer(t, kvstoretest.WithTLS()),
		file: filepath.Join(t.TempDir(), "services.yaml")}
}

// key returns the value at key in the cluster's etcd ("" when none).
func (c *meshCluster) key(t *testing.T, key string) string {
	t.Helper()
	return c.etcd.Value(key)
}

// startAgent starts an agent of c without Kubernetes, with the service
// manager reading c.file; meshDir, when set, holds the remotes' configs.
func startAgent(t *testing.T, c *meshCluster, meshDir string) *client.Client {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	flags := []string{
		"socket-path=" + socket, "kvstore=etcd", "kvstore-opt=etcd.config=" + c.etcd.WriteConfigFile(),
		"cluster-name=" + c.name, fmt.Sprintf("cluster-id=%d", c.id), "node-name=node-" + c.name, "node-ip=192.0.2.10",
		"lb-state-file=" + c.file,
	}
	if meshDir != "" {
		flags = append(flags, "clustermesh-config="+meshDir)
	}
	celltest.StartWithFlags(t, flags,
		api.Cell, status.Cell, metrics.Cell, controller.Cell, kvstorecell.Cell, store.Cell, localnode.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, nodecell.Cell, clustermeshcell.Cell, publish.Cell,
		k8s.Cell, svcmanagercell.Cell, svcpublish.Cell,
		cell.Provide(func() remote.Options {
			return remote.Options{ConnectTimeout: 6 * time.Second, ConfigTimeout: 2 * time.Second,
				StatusInterval: 200 * time.Millisecond, RetryBase: 200 * time.Millisecond, HeartbeatTimeout: -1}
		}))
	cl := client.New(socket)
	t.Cleanup(cl.Close)
	return cl
}

// view renders GET /v1/service: each service's clusters' parts, then
// its ClusterIP frontend's backends with their clusters.
func view(t *testing.T, cl *client.Client) string {
	t.Helper()
	svcs, err := cl.Services(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range svcs {
		var parts []string
		for _, c := range g.Clusters {
			parts = append(parts, c.Cluster+">"+strings.Join(c.Backends, "+"))
		}
		for _, fe := range g.Frontends {
			var bes []string
			for _, b := range fe.Backends {
				bes = append(bes, b.Address+"@"+b.Cluster)
			}
			parts = append(parts, fe.Address+"->"+strings.Join(bes, "+"))
		}
		out = append(out, g.Namespace+"/"+g.Name+" "+strings.Join(parts, " "))
	}
	return strings.Join(out, "; ")
}

func waitView(t *testing.T, cl *client.Client, what, want string) {
	t.Helper()
	var last string
	celltest.Eventually(t, what+": "+want, func() bool {
		got := view(t, cl)
		if got != last {
			t.Logf("GET /v1/service: %s", got)
			last = got
		}
		return last == want
	})
}

// TestFileServicesAcrossClusters: two clusters without Kubernetes, each
// agent balancing the global service rebel-base of its --lb-state-file:
// cluster1's agent publishes it in its etcd as Cilium's ClusterService
// (then the services canary), cluster2's agent merges cluster1's
// backends into its frontend, and the ClusterMesh line counts it;
// cluster1's file changes follow, a service that is no longer shared or
// global has its key deleted.
func TestFileServicesAcrossClusters(t *testing.T) {
	c1, c2 := newCluster(t, "cluster1", 1), newCluster(t, "cluster2", 2)
	celltest.ReplaceFile(t, c1.file, rebelBase("10.96.1.10", "", "10.1.0.1"))
	celltest.ReplaceFile(t, c2.file, rebelBase("10.96.2.10", "", "10.2.0.1"))
	meshDir := t.TempDir()
	c1.etcd.WriteMeshConfig(meshDir, c1.name)
	startAgent(t, c1, "")
	a2 := startAgent(t, c2, meshDir)

	key := layout.ServiceKey("cluster1", "default", "rebel-base")
	celltest.Eventually(t, "cluster1's services canary", func() bool {
		return c1.key(t, "cilium/synced/cluster1/"+layout.CanaryServices) != ""
	})
	s, err := service.Decode("default/rebel-base", []byte(c1.key(t, key)))
	if err != nil {
		t.Fatalf("the services canary is written before the service it covers: %v", err)
	}
	if !s.Shared || !s.IncludeExternal || s.ClusterID != 1 || s.Backends["10.1.0.1"]["http"].Port != 80 ||
		s.Frontends["10.96.1.10"]["http"].Port != 80 {
		t.Errorf("published %+v", s)
	}
	waitView(t, a2, "merged in cluster2", "default/rebel-base cluster1>10.1.0.1:80/TCP (http) cluster2>10.2.0.1:80/TCP (http) "+
		"10.96.2.10:80/TCP->10.2.0.1:80/TCP@cluster2+10.1.0.1:80/TCP@cluster1")
	celltest.Eventually(t, "the ClusterMesh line counts it", func() bool {
		st, err := a2.Status(context.Background())
		if err != nil {
			return false
		}
		for _, e := range st.Entries {
			if e.Name == "ClusterMesh" {
				return strings.HasSuffix(e.Message, "1/1 clusters ready, 1 global-services")
			}
		}
		return false
	})

	// cluster1's backends change (a pod replaced), then go.
	celltest.ReplaceFile(t, c1.file, rebelBase("10.96.1.10", "", "10.1.0.5", "10.1.0.6"))
	waitView(t, a2, "cluster1's new backends", "default/rebel-base cluster1>10.1.0.5:80/TCP (http)+10.1.0.6:80/TCP (http) cluster2>10.2.0.1:80/TCP (http) "+
		"10.96.2.10:80/TCP->10.2.0.1:80/TCP@cluster2+10.1.0.5:80/TCP@cluster1+10.1.0.6:80/TCP@cluster1")
	// Not shared: the key goes, cluster2 balances to its own only.
	celltest.ReplaceFile(t, c1.file, rebelBase("10.96.1.10", `, service.cilium.io/shared: "false"`, "10.1.0.5"))
	celltest.Eventually(t, "the unshared service's key deleted", func() bool { return c1.key(t, key) == "" })
	waitView(t, a2, "cluster1's part withdrawn", "default/rebel-base cluster2>10.2.0.1:80/TCP (http) 10.96.2.10:80/TCP->10.2.0.1:80/TCP@cluster2")
	// Shared again, then not global: published, then deleted.
	celltest.ReplaceFile(t, c1.file, rebelBase("10.96.1.10", "", "10.1.0.5"))
	celltest.Eventually(t, "published again", func() bool { return c1.key(t, key) != "" })
	celltest.ReplaceFile(t, c1.file, strings.Replace(rebelBase("10.96.1.10", "", "10.1.0.5"), `service.cilium.io/global: "true"`, `team: rebels`, 1))
	celltest.Eventually(t, "the key of a service no longer global deleted", func() bool { return c1.key(t, key) == "" })
}
