package k8s_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
)

// TestDisabled: without Kubernetes the cell says so, its streams close
// at once and the gate is open: the agent runs standalone.
func TestDisabled(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	a := startAgent(t)
	if a.clientset.IsEnabled() {
		t.Fatal("enabled without configuration")
	}
	for _, name := range []string{"Kubernetes", "Kubernetes APIs"} {
		if r := a.probe(t, name); r.State != status.Disabled {
			t.Errorf("%s: got %+v, want Disabled", name, r)
		}
	}
	if _, ok := <-a.pods.Events(context.Background()); ok {
		t.Error("disabled Pods delivered an event")
	}
	if err := a.gate.WaitForCacheSync(context.Background()); err != nil {
		t.Errorf("gate: %v", err)
	}
}

// TestBadKubeconfig: an unreadable kubeconfig stops the agent at
// populate, naming the flag.
func TestBadKubeconfig(t *testing.T) {
	var cs k8s.Clientset
	_, err := celltest.Populate(t, []string{"node-name=node-a", "node-ip=192.0.2.10",
		"k8s-kubeconfig-path=/nonexistent/kubeconfig"}, localnode.Cell, k8s.Cell, celltest.Capture(&cs))
	if err == nil || !strings.Contains(err.Error(), "--k8s-kubeconfig-path") {
		t.Fatalf("got %v, want an error naming --k8s-kubeconfig-path", err)
	}
}

// TestBadServiceProxyName: a --k8s-service-proxy-name that is no label
// value stops the agent at populate, naming the flag; the selector of
// a good one is kube-proxy's.
func TestBadServiceProxyName(t *testing.T) {
	for _, bad := range []string{"two words", "-dash-first", strings.Repeat("x", 64)} {
		_, err := celltest.Populate(t, []string{"node-name=node-a", "node-ip=192.0.2.10", "k8s-service-proxy-name=" + bad},
			localnode.Cell, k8s.Cell)
		if err == nil || !strings.Contains(err.Error(), "--k8s-service-proxy-name") {
			t.Errorf("%q: got %v, want an error naming --k8s-service-proxy-name", bad, err)
		}
	}
	for name, want := range map[string]string{
		"":         "!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless",
		"my-proxy": "service.kubernetes.io/service-proxy-name=my-proxy,!service.kubernetes.io/headless",
	} {
		if got := k8s.ServiceSelector(name); got != want {
			t.Errorf("ServiceSelector(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestStatusAndPods runs against a real kube-apiserver: the status line
// shows its version as Cilium does, Pods delivers only this node's pods
// (listing, Sync, then changes) to every subscriber of one informer, and
// a missing CRD is named in "Kubernetes APIs".
func TestStatusAndPods(t *testing.T) {
	srv := k8stest.Start(t)
	ctx := context.Background()
	cs := srv.Clientset()
	mustCreatePod(t, cs.CoreV1(), pod("default", "before", "node-a", map[string]string{"app": "web"}))
	mustCreatePod(t, cs.CoreV1(), pod("default", "elsewhere", "node-b", nil))

	a := startAgent(t, "k8s-kubeconfig-path="+srv.WriteKubeconfig(k8stest.AdminToken))
	r := a.probe(t, "Kubernetes")
	if r.State != status.Ok || !regexp.MustCompile(`^1\.35 \(v1\.35\.\d+\) \[linux/[a-z0-9]+\]$`).MatchString(r.Message) {
		t.Fatalf("Kubernetes: got %+v, want Ok 1.35 (v1.35.x) [linux/...]", r)
	}

	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	first, second := a.pods.Events(subCtx), a.pods.Events(subCtx)
	for _, ch := range []<-chan k8s.Event[*corev1.Pod]{first, second} {
		if ev := next(t, ch); ev.Kind != k8s.Upsert || ev.Key.String() != "default/before" {
			t.Fatalf("first event: got %v %v, want upsert default/before", ev.Kind, ev.Key)
		}
		if ev := next(t, ch); ev.Kind != k8s.Sync {
			t.Fatalf("second event: got %v %v, want sync", ev.Kind, ev.Key)
		}
	}
	mustCreatePod(t, cs.CoreV1(), pod("default", "after", "node-a", nil))
	if ev := next(t, first); ev.Kind != k8s.Upsert || ev.Key.String() != "default/after" {
		t.Fatalf("got %v %v, want upsert default/after", ev.Kind, ev.Key)
	}
	// No kubelet confirms a graceful deletion: delete at once.
	if err := cs.CoreV1().Pods("default").Delete(ctx, "before", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	ev := next(t, first)
	for ev.Kind == k8s.Upsert && ev.Key.String() == "default/before" && ev.Object.DeletionTimestamp != nil {
		ev = next(t, first) // marked for deletion first
	}
	if ev.Kind != k8s.Delete || ev.Key.String() != "default/before" || ev.Object.Labels["app"] != "web" {
		t.Fatalf("got %v %v, want delete default/before with its last state", ev.Kind, ev.Key)
	}
	store, err := a.pods.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the store holds the node's pods", func() bool {
		return podNames(store.List()) == "after"
	})

	// No CRD: the CNP API is named with its reason.
	cnps := a.cnps.Events(subCtx)
	celltest.Eventually(t, "the missing CRD shows in Kubernetes APIs", func() bool {
		r := a.probe(t, "Kubernetes APIs")
		return r.State == status.Warning && slices.ContainsFunc(r.Details, func(d string) bool {
			return strings.Contains(d, "cilium/v2::CiliumNetworkPolicy: CRD missing")
		})
	})
	r = a.probe(t, "Kubernetes APIs")
	if want := `["cilium/v2::CiliumNetworkPolicy", "core/v1::Pods"]`; r.Message != want {
		t.Errorf("Kubernetes APIs: got %q, want %q", r.Message, want)
	}
	cancel()
	for range cnps { // closed when the subscription ends
	}
}

// TestForbidden: a user without RBAC permissions gets the resource and
// the reason in status.
func TestForbidden(t *testing.T) {
	srv := k8stest.Start(t, k8stest.WithUser("nobody-token", "nobody"))
	a := startAgent(t, "k8s-kubeconfig-path="+srv.WriteKubeconfig("nobody-token"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.nss.Events(ctx)
	celltest.Eventually(t, "forbidden shows in Kubernetes APIs", func() bool {
		r := a.probe(t, "Kubernetes APIs")
		return r.State == status.Warning && slices.ContainsFunc(r.Details, func(d string) bool {
			return strings.Contains(d, "core/v1::Namespace: forbidden (RBAC)")
		})
	})
}

func podNames(pods []*corev1.Pod) string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}
