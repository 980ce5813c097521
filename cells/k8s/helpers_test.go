package k8s_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
)

// agent is the k8s cell started alone, with the local node.
type agent struct {
	clientset k8s.Clientset
	pods      k8s.Pods
	nss       k8s.Namespaces
	cnps      k8s.CiliumNetworkPolicies
	ccnps     k8s.CiliumClusterwideNetworkPolicies
	cids      k8s.CiliumIdentities
	ceps      k8s.CiliumEndpoints
	nodes     k8s.Nodes
	svcs      k8s.Services
	slices    k8s.EndpointSlices
	nps       k8s.NetworkPolicies
	gate      k8s.CacheSync
	providers statusProviders
}

type statusProviders struct {
	cell.In

	All []status.Provider `group:"status-providers"`
}

func startAgent(t *testing.T, flags ...string) *agent {
	t.Helper()
	a := &agent{}
	celltest.StartWithFlags(t, append([]string{"node-name=node-a", "node-ip=192.0.2.10"}, flags...),
		localnode.Cell, k8s.Cell,
		celltest.Capture(&a.clientset), celltest.Capture(&a.pods), celltest.Capture(&a.nss),
		celltest.Capture(&a.cnps), celltest.Capture(&a.ccnps), celltest.Capture(&a.cids), celltest.Capture(&a.ceps), celltest.Capture(&a.nodes), celltest.Capture(&a.svcs),
		celltest.Capture(&a.slices), celltest.Capture(&a.nps), celltest.Capture(&a.gate),
		cell.Invoke(func(p statusProviders) { a.providers = p }))
	return a
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

// next returns the next event of ch, failing after 30s.
func next[T runtime.Object](t *testing.T, ch <-chan k8s.Event[T]) k8s.Event[T] {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event stream closed")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	return k8s.Event[T]{}
}

func pod(ns, name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause"}},
		},
	}
}

func mustCreatePod(t *testing.T, c typedcorev1.CoreV1Interface, p *corev1.Pod) {
	t.Helper()
	if _, err := c.Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s/%s: %v", p.Namespace, p.Name, err)
	}
}
