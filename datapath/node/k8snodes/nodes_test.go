package k8snodes_test

import (
	"context"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/node/k8snodes"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/source"
)

func k8sNode(name string, cidrs []string, addrs ...corev1.NodeAddress) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "a"}},
		Spec:       corev1.NodeSpec{PodCIDRs: cidrs},
		Status:     corev1.NodeStatus{Addresses: addrs},
	}
}

func TestConvert(t *testing.T) {
	tests := []struct {
		name                  string
		give                  *corev1.Node
		wantIP, wantV4, want6 string
	}{
		{"dual stack", k8sNode("n1", []string{"10.0.2.0/24", "fd00:2::/120"},
			corev1.NodeAddress{Type: corev1.NodeHostName, Address: "n1"},
			corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "192.0.2.20"}),
			"192.0.2.20", "10.0.2.0/24", "fd00:2::/120"},
		{"podCIDR only, external address", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"},
			Spec:   corev1.NodeSpec{PodCIDR: "10.0.3.0/24"},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "198.51.100.3"}}}},
			"198.51.100.3", "10.0.3.0/24", "invalid Prefix"},
		{"bad values left out", k8sNode("n3", []string{"nonsense"}, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "x"}),
			"invalid IP", "invalid Prefix", "invalid Prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := k8snodes.Convert(tt.give, cluster.Info{ClusterName: "c1", ClusterID: 1})
			if n.Source != source.Kubernetes || n.Cluster != "c1" || n.Name != tt.give.Name {
				t.Fatalf("got %+v", n)
			}
			if got := n.PrimaryIP(false).String(); got != tt.wantIP {
				t.Errorf("primary IP %s, want %s", got, tt.wantIP)
			}
			if got := n.IPv4AllocCIDR.String(); got != tt.wantV4 {
				t.Errorf("IPv4 pod CIDR %s, want %s", got, tt.wantV4)
			}
			if got := n.IPv6AllocCIDR.String(); got != tt.want6 {
				t.Errorf("IPv6 pod CIDR %s, want %s", got, tt.want6)
			}
		})
	}
}

// TestNodesFromAPIServer: nodes created, changed and deleted through a
// real kube-apiserver are added, updated and removed in the node manager
// with source kubernetes.
func TestNodesFromAPIServer(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs() // identities are CiliumIdentities (mode crd: Kubernetes, no kvstore)
	cs := srv.Clientset()
	ctx := context.Background()
	internal := corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "192.0.2.20"}
	if _, err := cs.CoreV1().Nodes().Create(ctx, k8sNode("node-b", []string{"10.0.2.0/24"}, internal), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var m node.Manager
	celltest.StartWithFlags(t, []string{"node-name=node-a", "node-ip=192.0.2.10", "cluster-name=c1", "cluster-id=1",
		"k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken)},
		localnode.Cell, kvstorecell.Cell, store.Cell, identitycell.Cell, ipcachecell.Cell, nodecell.Cell,
		k8s.Cell, k8snodes.Cell, celltest.Capture(&m))
	id := node.Identity{Cluster: "c1", Name: "node-b"}
	celltest.Eventually(t, "node-b from the API server", func() bool {
		n, ok := m.GetNode(id)
		return ok && n.Source == source.Kubernetes && n.PrimaryIP(false) == netip.MustParseAddr("192.0.2.20") &&
			n.IPv4AllocCIDR == netip.MustParsePrefix("10.0.2.0/24")
	})
	kn, err := cs.CoreV1().Nodes().Get(ctx, "node-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kn.Status.Addresses[0].Address = "192.0.2.21"
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, kn, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "node-b's new address", func() bool {
		n, ok := m.GetNode(id)
		return ok && n.PrimaryIP(false) == netip.MustParseAddr("192.0.2.21")
	})
	if err := cs.CoreV1().Nodes().Delete(ctx, "node-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "node-b removed", func() bool {
		_, ok := m.GetNode(id)
		return !ok
	})
}
