package k8ssvc_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh/clustermeshcell"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/clustermesh/remote"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/clustermesh/service/k8ssvc"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/policycell"
)

// meshCluster is one cluster: its own etcd and kube-apiserver.
type meshCluster struct {
	name string
	id   uint32
	etcd *kvstoretest.Server
	kube *k8stest.Server
	cs   kubernetes.Interface
}

func newCluster(t *testing.T, name string, id uint32) *meshCluster {
	t.Helper()
	kube := k8stest.Start(t)
	return &meshCluster{name: name, id: id, etcd: kvstoretest.StartServer(t, kvstoretest.WithTLS()), kube: kube, cs: kube.Clientset()}
}

// agent is one agent hive of a cluster; it shares nothing with another
// cluster's agents but etcd.
type agent struct {
	hive   interface{ Stop(context.Context) error }
	client *client.Client
	sync   k8s.CacheSync
	lead   publish.Leadership
}

// startAgent starts an agent of c; meshDir, when set, holds the config
// files of the remote clusters; extra are more cells.
func startAgent(t *testing.T, c *meshCluster, nodeName, meshDir string, extra ...cell.Cell) *agent {
	t.Helper()
	return startAgentFlags(t, c, nodeName, meshDir, nil, extra...)
}

// startAgentFlags is startAgent with more flags.
func startAgentFlags(t *testing.T, c *meshCluster, nodeName, meshDir string, more []string, extra ...cell.Cell) *agent {
	t.Helper()
	a := &agent{}
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	flags := []string{
		"socket-path=" + socket, "kvstore=etcd", "kvstore-opt=etcd.config=" + c.etcd.WriteConfigFile(),
		"cluster-name=" + c.name, fmt.Sprintf("cluster-id=%d", c.id), "node-name=" + nodeName, "node-ip=192.0.2.10",
		"k8s-kubeconfig-path=" + c.kube.WriteKubeconfig(k8stest.AdminToken),
	}
	if meshDir != "" {
		flags = append(flags, "clustermesh-config="+meshDir)
	}
	flags = append(flags, more...)
	a.hive = celltest.StartWithFlags(t, flags,
		api.Cell, status.Cell, metrics.Cell, controller.Cell, kvstorecell.Cell, store.Cell, localnode.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, nodecell.Cell, clustermeshcell.Cell, publish.Cell,
		k8s.Cell, k8ssvc.Cell,
		cell.Provide(func() remote.Options {
			return remote.Options{ConnectTimeout: 6 * time.Second, ConfigTimeout: 2 * time.Second,
				StatusInterval: 200 * time.Millisecond, RetryBase: 200 * time.Millisecond, HeartbeatTimeout: -1}
		}),
		celltest.Capture(&a.sync), celltest.Capture(&a.lead), cell.Group(extra...))
	a.client = client.New(socket)
	t.Cleanup(a.client.Close)
	return a
}

// view renders GET /v1/service as "ns/name=cluster:backends|...;...".
func (a *agent) view(t *testing.T) string {
	t.Helper()
	svcs, err := a.client.Services(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range svcs {
		var parts []string
		for _, c := range g.Clusters {
			parts = append(parts, c.Cluster+":"+strings.Join(c.Frontends, "+")+">"+strings.Join(c.Backends, "+"))
		}
		out = append(out, g.Namespace+"/"+g.Name+"="+strings.Join(parts, "|"))
	}
	return strings.Join(out, ";")
}

// waitView waits until GET /v1/service renders as want.
func (a *agent) waitView(t *testing.T, what, want string) {
	t.Helper()
	var last string
	celltest.Eventually(t, what+": "+want, func() bool {
		last = a.view(t)
		return last == want
	})
}

func (c *meshCluster) apply(t *testing.T, svc *corev1.Service, sls ...*discoveryv1.EndpointSlice) {
	t.Helper()
	ctx := context.Background()
	if old, err := c.cs.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{}); err == nil {
		old.Annotations = svc.Annotations
		if _, err := c.cs.CoreV1().Services(svc.Namespace).Update(ctx, old, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	} else if _, err := c.cs.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, sl := range sls {
		c.applySlice(t, sl)
	}
}

func (c *meshCluster) applySlice(t *testing.T, sl *discoveryv1.EndpointSlice) {
	t.Helper()
	ctx := context.Background()
	api := c.cs.DiscoveryV1().EndpointSlices(sl.Namespace)
	if old, err := api.Get(ctx, sl.Name, metav1.GetOptions{}); err == nil {
		sl.ResourceVersion = old.ResourceVersion
		if _, err := api.Update(ctx, sl, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	} else if _, err := api.Create(ctx, sl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// key returns the value at key in the cluster's etcd ("" when none).
func (c *meshCluster) key(t *testing.T, key string) string {
	t.Helper()
	return c.etcd.Value(key)
}

func global(shared string) map[string]string {
	a := map[string]string{k8ssvc.AnnotationGlobal: "true"}
	if shared != "" {
		a[k8ssvc.AnnotationShared] = shared
	}
	return a
}

// TestServicesFromAPIServer: a global Service and its EndpointSlices
// created, changed and deleted through a real kube-apiserver are
// followed by GET /v1/service and by the key the publisher writes in the
// cluster's etcd; a service that is not shared is listed but not
// published; the watcher holds the CacheSync gate until it synced.
func TestServicesFromAPIServer(t *testing.T) {
	c := newCluster(t, "c1", 1)
	ctx := context.Background()
	// One service before the agent starts: the initial listing.
	c.apply(t, k8sService("web", global(""), "10.96.0.10"), slice("web", "web-1", endpoint(nil, "10.1.0.1")))
	a := startAgent(t, c, "node-a", "")
	if err := a.sync.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	if pending, open := a.sync.Pending(); !open || len(pending) != 0 {
		t.Fatalf("gate: pending %v open %v", pending, open)
	}
	// The listing is applied when the gate opens.
	if got, want := a.view(t), "default/web=c1:10.96.0.10:53/UDP (dns)+10.96.0.10:80/TCP (http)>10.1.0.1:5353/UDP (dns)+10.1.0.1:8080/TCP (http)"; got != want {
		t.Fatalf("after sync: %q, want %q", got, want)
	}
	webKey := layout.ServiceKey("c1", "default", "web")
	// The services canary comes after the services it covers.
	celltest.Eventually(t, "services canary", func() bool { return c.key(t, "cilium/synced/c1/"+layout.CanaryServices) != "" })
	if c.key(t, webKey) == "" {
		t.Fatal("the services canary is written before the services")
	}
	celltest.Eventually(t, "web published", func() bool {
		s, err := service.Decode("default/web", []byte(c.key(t, webKey)))
		return err == nil && s.Shared && s.ClusterID == 1 && len(s.Backends) == 1 && s.Backends["10.1.0.1"]["http"].Port == 8080
	})

	// A second slice, one endpoint not ready: the ready one joins.
	c.applySlice(t, slice("web", "web-2", endpoint(ptr(false), "10.1.0.3"), endpoint(ptr(true), "10.1.0.2")))
	a.waitView(t, "second slice", "default/web=c1:10.96.0.10:53/UDP (dns)+10.96.0.10:80/TCP (http)>"+
		"10.1.0.1:5353/UDP (dns)+10.1.0.1:8080/TCP (http)+10.1.0.2:5353/UDP (dns)+10.1.0.2:8080/TCP (http)")
	celltest.Eventually(t, "second backend published", func() bool { return strings.Contains(c.key(t, webKey), "10.1.0.2") })

	// The first slice's endpoint turns not ready.
	c.applySlice(t, slice("web", "web-1", endpoint(ptr(false), "10.1.0.1")))
	a.waitView(t, "endpoint not ready", "default/web=c1:10.96.0.10:53/UDP (dns)+10.96.0.10:80/TCP (http)>"+
		"10.1.0.2:5353/UDP (dns)+10.1.0.2:8080/TCP (http)")

	// Not shared: listed here, the key deleted.
	c.apply(t, k8sService("web", global("false")))
	celltest.Eventually(t, "unshared web unpublished", func() bool { return c.key(t, webKey) == "" })
	if got := a.view(t); !strings.HasPrefix(got, "default/web=c1:") {
		t.Errorf("unshared web not listed locally: %q", got)
	}
	// A service that is not global: neither.
	c.apply(t, k8sService("plain", nil, "10.96.0.11"), slice("plain", "plain-1", endpoint(nil, "10.1.0.9")))
	// Shared again, then deleted.
	c.apply(t, k8sService("web", global("true")))
	celltest.Eventually(t, "web published again", func() bool { return c.key(t, webKey) != "" })
	if v := c.key(t, layout.ServiceKey("c1", "default", "plain")); v != "" {
		t.Errorf("a service that is not global is published: %s", v)
	}
	if err := c.cs.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	a.waitView(t, "web deleted", "")
	celltest.Eventually(t, "web's key deleted", func() bool { return c.key(t, webKey) == "" })
}

// TestGlobalServiceAcrossClusters: two clusters, each with its own etcd
// and kube-apiserver, and an agent each that shares nothing with the
// other but the remote etcd: the global service of both is merged in
// cluster2's list, with cluster1's backends published by cluster1's
// agent; a service cluster1 does not share is not.
func TestGlobalServiceAcrossClusters(t *testing.T) {
	c1, c2 := newCluster(t, "cluster1", 1), newCluster(t, "cluster2", 2)
	meshDir := t.TempDir()
	c1.etcd.WriteMeshConfig(meshDir, c1.name)
	c1.apply(t, k8sService("web", global(""), "10.96.0.10"), slice("web", "web-1", endpoint(nil, "10.1.0.1")))
	c1.apply(t, k8sService("db", global("false"), "10.96.0.20"), slice("db", "db-1", endpoint(nil, "10.1.0.2")))
	c2.apply(t, k8sService("web", global(""), "10.96.1.10"), slice("web", "web-1", endpoint(nil, "10.2.0.1")))
	startAgent(t, c1, "node-1", "")
	a2 := startAgent(t, c2, "node-2", meshDir)

	a2.waitView(t, "merged web", "default/web="+
		"cluster1:10.96.0.10:53/UDP (dns)+10.96.0.10:80/TCP (http)>10.1.0.1:5353/UDP (dns)+10.1.0.1:8080/TCP (http)|"+
		"cluster2:10.96.1.10:53/UDP (dns)+10.96.1.10:80/TCP (http)>10.2.0.1:5353/UDP (dns)+10.2.0.1:8080/TCP (http)")

	// cluster1 changes its backends; then it deletes the service.
	c1.applySlice(t, slice("web", "web-1", endpoint(nil, "10.1.0.5")))
	a2.waitView(t, "cluster1's new backend", "default/web="+
		"cluster1:10.96.0.10:53/UDP (dns)+10.96.0.10:80/TCP (http)>10.1.0.5:5353/UDP (dns)+10.1.0.5:8080/TCP (http)|"+
		"cluster2:10.96.1.10:53/UDP (dns)+10.96.1.10:80/TCP (http)>10.2.0.1:5353/UDP (dns)+10.2.0.1:8080/TCP (http)")
	if err := c1.cs.CoreV1().Services("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	a2.waitView(t, "cluster1's web gone", "default/web="+
		"cluster2:10.96.1.10:53/UDP (dns)+10.96.1.10:80/TCP (http)>10.2.0.1:5353/UDP (dns)+10.2.0.1:8080/TCP (http)")
}

// TestPublisherHandover: two agents of a cluster; only the publisher
// writes: it deletes the key of a service gone while no one wrote, and
// when it stops the other agent takes over and writes the services
// again with its own lease.
func TestPublisherHandover(t *testing.T) {
	c := newCluster(t, "c1", 1)
	staleKey, webKey := layout.ServiceKey("c1", "default", "old"), layout.ServiceKey("c1", "default", "web")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.etcd.Client().Put(ctx, staleKey, `{"cluster":"c1","namespace":"default","name":"old","shared":true,"clusterID":1}`); err != nil {
		t.Fatal(err)
	}
	c.apply(t, k8sService("web", global(""), "10.96.0.10"), slice("web", "web-1", endpoint(nil, "10.1.0.1")))
	a1, a2 := startAgent(t, c, "node-1", ""), startAgent(t, c, "node-2", "")
	celltest.Eventually(t, "web published, the stale key deleted", func() bool {
		return c.key(t, webKey) != "" && c.key(t, staleKey) == ""
	})
	celltest.Eventually(t, "one leader", func() bool { return a1.lead.Leader() != a2.lead.Leader() })
	leader, other := a1, a2
	if a2.lead.Leader() {
		leader, other = a2, a1
	}
	if err := leader.hive.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the other agent leads and web is published", func() bool {
		return other.lead.Leader() && c.key(t, webKey) != ""
	})
	// The new leader follows changes.
	c.applySlice(t, slice("web", "web-1", endpoint(nil, "10.1.0.7")))
	celltest.Eventually(t, "the new backend published", func() bool { return strings.Contains(c.key(t, webKey), "10.1.0.7") })
}

// relabel gives the Service and the slice of svc and sl their labels.
func (c *meshCluster) relabel(t *testing.T, svc *corev1.Service, sl *discoveryv1.EndpointSlice) {
	t.Helper()
	ctx := context.Background()
	old, err := c.cs.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old.Labels = svc.Labels
	if _, err := c.cs.CoreV1().Services(svc.Namespace).Update(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.applySlice(t, sl)
}
