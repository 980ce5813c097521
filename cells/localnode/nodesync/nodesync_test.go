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
