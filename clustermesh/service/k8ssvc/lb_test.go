package k8ssvc_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/clustermesh/clustermeshcell"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

// withWriter adds the service manager writing to w, waiting for the
// remote clusters as the agent does.
func withWriter(w *svcmanagertest.Writer) cell.Cell {
	return cell.Group(svcmanagercell.Cell,
		cell.Provide(func() datapath.LBMapWriter { return w },
			func(s clustermeshcell.SyncWaiter) datapath.RemoteSync { return s }))
}

// ours is the maps without the apiserver's default/kubernetes.
func ours(w *svcmanagertest.Writer) []string {
	return slices.DeleteFunc(w.Dump(), func(s string) bool { return strings.Contains(s, ":443/TCP ClusterIP") })
}

func waitCalls(t *testing.T, w *svcmanagertest.Writer, what string, want ...string) {
	t.Helper()
	celltest.Eventually(t, what, func() bool { return len(w.Calls()) >= len(want) })
	got := w.Take()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: calls =\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestServicesToLoadBalancer: Services and EndpointSlices of a real
// kube-apiserver reach the writer in one ReconcileServices after the
// caches synced; a slice change rewrites only the frontends of its
// service, a change that changes no backend writes nothing, and GET
// /v1/service shows the frontends.
func TestServicesToLoadBalancer(t *testing.T) {
	c := newCluster(t, "c1", 1)
	c.apply(t, k8sService("web", nil, "10.96.0.10"), slice("web", "web-1", endpoint(nil, "10.1.0.1")))
	c.apply(t, k8sService("db", nil, "10.96.0.20"), slice("db", "db-1", endpoint(nil, "10.1.0.9")))
	w := svcmanagertest.New()
	a := startAgent(t, c, "node-a", "", withWriter(w))

	waitCalls(t, w, "the initial reconcile", "reconcile 5") // and default/kubernetes
	want := []string{
		"10.96.0.10:53/UDP ClusterIP -> 10.1.0.1:5353/UDP(active)",
		"10.96.0.10:80/TCP ClusterIP -> 10.1.0.1:8080/TCP(active)",
		"10.96.0.20:53/UDP ClusterIP -> 10.1.0.9:5353/UDP(active)",
		"10.96.0.20:80/TCP ClusterIP -> 10.1.0.9:8080/TCP(active)",
	}
	if got := ours(w); !slices.Equal(got, want) {
		t.Fatalf("maps =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// A terminating endpoint joins web's slice: web's two frontends only.
	term := endpoint(ptr(false), "10.1.0.2")
	term.Conditions.Serving, term.Conditions.Terminating = ptr(true), ptr(true)
	c.applySlice(t, slice("web", "web-1", endpoint(nil, "10.1.0.1"), term))
	waitCalls(t, w, "web's slice changed",
		"upsert 10.96.0.10:53/UDP ClusterIP -> 10.1.0.1:5353/UDP(active) 10.1.0.2:5353/UDP(terminating)",
		"upsert 10.96.0.10:80/TCP ClusterIP -> 10.1.0.1:8080/TCP(active) 10.1.0.2:8080/TCP(terminating)")

	// A not ready endpoint changes no backend: nothing is written, and
	// the next change is written alone.
	c.applySlice(t, slice("db", "db-1", endpoint(nil, "10.1.0.9"), endpoint(ptr(false), "10.1.0.8")))
	c.applySlice(t, slice("db", "db-1", endpoint(nil, "10.1.0.7")))
	waitCalls(t, w, "db's endpoint replaced",
		"upsert 10.96.0.20:53/UDP ClusterIP -> 10.1.0.7:5353/UDP(active)",
		"upsert 10.96.0.20:80/TCP ClusterIP -> 10.1.0.7:8080/TCP(active)")

	svcs, err := a.client.Services(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	svcs = slices.DeleteFunc(svcs, func(s models.GlobalService) bool { return s.Name == "kubernetes" })
	if len(svcs) != 2 || svcs[1].Name != "web" || len(svcs[1].Frontends) != 2 ||
		svcs[1].Frontends[1].Address != "10.96.0.10:80/TCP" || svcs[1].Frontends[1].Type != "ClusterIP" ||
		len(svcs[1].Frontends[1].Backends) != 2 || svcs[1].Frontends[1].Backends[1].State != "terminating" ||
		svcs[1].Frontends[1].Backends[0].Cluster != "c1" {
		t.Errorf("GET /v1/service = %+v", svcs)
	}

	if err := c.cs.CoreV1().Services("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCalls(t, w, "web deleted", "delete 10.96.0.10:53/UDP", "delete 10.96.0.10:80/TCP")
}

// TestGlobalServiceBackends: cluster2's agent balances its global
// service to cluster1's backends too: in the initial reconcile (which
// waits for the remote cluster), then per service.cilium.io/affinity:
// local keeps to the local backend while it is ready and fails over to
// cluster1's when it is not.
func TestGlobalServiceBackends(t *testing.T) {
	c1, c2 := newCluster(t, "cluster1", 1), newCluster(t, "cluster2", 2)
	meshDir := t.TempDir()
	c1.etcd.WriteMeshConfig(meshDir, c1.name)
	c1.apply(t, k8sService("web", global(""), "10.96.0.10"), slice("web", "web-1", endpoint(nil, "10.1.0.1")))
	c2.apply(t, k8sService("web", global(""), "10.96.1.10"), slice("web", "web-1", endpoint(nil, "10.2.0.1")))
	startAgent(t, c1, "node-1", "")
	w := svcmanagertest.New()
	startAgent(t, c2, "node-2", meshDir, withWriter(w))

	waitCalls(t, w, "the initial reconcile", "reconcile 3") // and default/kubernetes
	want := []string{
		"10.96.1.10:53/UDP ClusterIP -> 10.2.0.1:5353/UDP(active) 10.1.0.1:5353/UDP(active,c1)",
		"10.96.1.10:80/TCP ClusterIP -> 10.2.0.1:8080/TCP(active) 10.1.0.1:8080/TCP(active,c1)",
	}
	if got := ours(w); !slices.Equal(got, want) {
		t.Fatalf("maps =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	affinityLocal := global("")
	affinityLocal[svcmanager.AnnotationAffinity] = "local"
	c2.apply(t, k8sService("web", affinityLocal))
	waitCalls(t, w, "affinity local",
		"upsert 10.96.1.10:53/UDP ClusterIP -> 10.2.0.1:5353/UDP(active)",
		"upsert 10.96.1.10:80/TCP ClusterIP -> 10.2.0.1:8080/TCP(active)")

	c2.applySlice(t, slice("web", "web-1", endpoint(ptr(false), "10.2.0.1")))
	waitCalls(t, w, "the local backend not ready: cluster1's",
		"upsert 10.96.1.10:53/UDP ClusterIP -> 10.1.0.1:5353/UDP(active,c1)",
		"upsert 10.96.1.10:80/TCP ClusterIP -> 10.1.0.1:8080/TCP(active,c1)")

	c1.applySlice(t, slice("web", "web-1", endpoint(nil, "10.1.0.5")))
	waitCalls(t, w, "cluster1's backend replaced",
		"upsert 10.96.1.10:53/UDP ClusterIP -> 10.1.0.5:5353/UDP(active,c1)",
		"upsert 10.96.1.10:80/TCP ClusterIP -> 10.1.0.5:8080/TCP(active,c1)")
}

// TestServiceProxyName: as kube-proxy and Cilium, an agent handles the
// Services (and their EndpointSlices) without the
// service.kubernetes.io/service-proxy-name label, or with
// --k8s-service-proxy-name those with its value, and never those
// labelled headless; a Service relabelled for another proxy leaves the
// maps.
func TestServiceProxyName(t *testing.T) {
	c := newCluster(t, "c1", 1)
	proxied := func(name, proxy string) (*corev1.Service, *discoveryv1.EndpointSlice) {
		svc, sl := k8sService(name, nil, "10.96.0.1"+name[len(name)-1:]), slice(name, name+"-1", endpoint(nil, "10.1.0.1"+name[len(name)-1:]))
		if proxy != "" {
			// The EndpointSlice controller copies a Service's labels to
			// its slices.
			svc.Labels[k8s.LabelServiceProxyName], sl.Labels[k8s.LabelServiceProxyName] = proxy, proxy
		}
		return svc, sl
	}
	for _, x := range []struct{ name, proxy string }{{"web1", ""}, {"web2", "other"}} {
		svc, sl := proxied(x.name, x.proxy)
		c.apply(t, svc, sl)
	}
	hl, hlSlice := proxied("web3", "")
	hl.Labels[corev1.IsHeadlessService], hlSlice.Labels[corev1.IsHeadlessService] = "", ""
	c.apply(t, hl, hlSlice)

	ours1, theirs := svcmanagertest.New(), svcmanagertest.New()
	startAgent(t, c, "node-a", "", withWriter(ours1))
	startAgentFlags(t, c, "node-b", "", []string{"k8s-service-proxy-name=other"}, withWriter(theirs))
	waitCalls(t, ours1, "no proxy name: web1 and default/kubernetes", "reconcile 3")
	if got, want := ours(ours1), []string{
		"10.96.0.11:53/UDP ClusterIP -> 10.1.0.11:5353/UDP(active)",
		"10.96.0.11:80/TCP ClusterIP -> 10.1.0.11:8080/TCP(active)",
	}; !slices.Equal(got, want) {
		t.Fatalf("maps without a proxy name =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	waitCalls(t, theirs, "proxy name other: web2 only", "reconcile 2")
	if got, want := theirs.Dump(), []string{
		"10.96.0.12:53/UDP ClusterIP -> 10.1.0.12:5353/UDP(active)",
		"10.96.0.12:80/TCP ClusterIP -> 10.1.0.12:8080/TCP(active)",
	}; !slices.Equal(got, want) {
		t.Fatalf("maps of proxy other =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// web1 relabelled for proxy other: it moves from one agent to the
	// other (the watches see it leave and enter their selectors).
	svc, sl := proxied("web1", "other")
	c.relabel(t, svc, sl)
	waitCalls(t, ours1, "web1 handed to proxy other", "delete 10.96.0.11:53/UDP", "delete 10.96.0.11:80/TCP")
	// The Service may come before its slice: the end state.
	want := []string{
		"10.96.0.11:53/UDP ClusterIP -> 10.1.0.11:5353/UDP(active)",
		"10.96.0.11:80/TCP ClusterIP -> 10.1.0.11:8080/TCP(active)",
		"10.96.0.12:53/UDP ClusterIP -> 10.1.0.12:5353/UDP(active)",
		"10.96.0.12:80/TCP ClusterIP -> 10.1.0.12:8080/TCP(active)",
	}
	celltest.Eventually(t, "web1 taken by proxy other", func() bool { return slices.Equal(theirs.Dump(), want) })
}
