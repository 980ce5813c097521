package nodesync_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/nodesync"
)

// TestNodeWithCIDRsAtStart: an agent (re)started on a Node that has its
// spec.podCIDRs already has them in the local-node store before any
// cell starts (so restored endpoints find their CIDRs), with the node IP
// from the Node's InternalIP.
func TestNodeWithCIDRsAtStart(t *testing.T) {
	srv := k8stest.Start(t)
	cs := srv.Clientset()
	ctx := context.Background()
	n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Spec:       corev1.NodeSpec{PodCIDR: "10.244.7.0/24", PodCIDRs: []string{"10.244.7.0/24", "fd00:10:244:7::/64"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "fd00::a"}, {Type: corev1.NodeInternalIP, Address: "192.0.2.10"}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var st localnode.Store
	_, err = celltest.Populate(t, []string{"node-name=node-a", "ipam=kubernetes", "k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken)},
		localnode.Cell, k8s.Cell, nodesync.Cell, celltest.Capture(&st))
	if err != nil {
		t.Fatal(err)
	}
	got := st.Get()
	if got.IP != netip.MustParseAddr("fd00::a") || got.SecondaryIP != netip.MustParseAddr("192.0.2.10") ||
		got.IPv4AllocCIDR.String() != "10.244.7.0/24" || got.IPv6AllocCIDR.String() != "fd00:10:244:7::/64" {
		t.Fatalf("local node before start: %+v", got)
	}
}

// TestKubernetesIPAMNeedsKubernetes: --ipam=kubernetes without an API
// server stops the agent naming the flag.
func TestKubernetesIPAMNeedsKubernetes(t *testing.T) {
	_, err := celltest.Populate(t, []string{"node-name=node-a", "node-ip=192.0.2.1", "ipam=kubernetes"},
		localnode.Cell, k8s.Cell, nodesync.Cell, celltest.Capture(new(localnode.Store)))
	if !errors.Is(err, nodesync.ErrNoKubernetes) || !strings.Contains(err.Error(), "--ipam=kubernetes: Kubernetes is not configured") {
		t.Fatalf("populate = %v, want ErrNoKubernetes", err)
	}
}

// TestNodeBeingDeleted: the local node is being deleted while its Node
// has the cluster autoscaler's taint or a deletionTimestamp, and once
// it is gone (kube-proxy's rule for its health check), against a real
// kube-apiserver.
func TestNodeBeingDeleted(t *testing.T) {
	srv := k8stest.Start(t)
	cs := srv.Clientset().CoreV1().Nodes()
	ctx := context.Background()
	if _, err := cs.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Finalizers: []string{"apiary.test/hold"}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var st localnode.Store
	celltest.StartWithFlags(t, []string{"node-name=node-a", "node-ip=192.0.2.10", "k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken)},
		localnode.Cell, k8s.Cell, nodesync.Cell, celltest.Capture(&st))
	update := func(fn func(*corev1.Node)) {
		t.Helper()
		n, err := cs.Get(ctx, "node-a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fn(n)
		if _, err := cs.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(what string, want bool) {
		t.Helper()
		celltest.Eventually(t, what, func() bool { return st.Get().BeingDeleted == want })
	}
	update(func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "other", Effect: corev1.TaintEffectNoSchedule}}
	})
	// The autoscaler's taint, beside another.
	update(func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: nodesync.ToBeDeletedTaint, Value: "1700000000", Effect: corev1.TaintEffectNoSchedule})
	})
	wait("the autoscaler's taint", true)
	update(func(n *corev1.Node) { n.Spec.Taints = n.Spec.Taints[:1] })
	wait("the taint removed", false)
	if err := cs.Delete(ctx, "node-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("a deletionTimestamp (the finalizer holds the Node)", true)
	update(func(n *corev1.Node) { n.Finalizers = nil })
	celltest.Eventually(t, "the Node gone", func() bool {
		_, err := cs.Get(ctx, "node-a", metav1.GetOptions{})
		return err != nil
	})
	wait("still, once gone", true)
}
