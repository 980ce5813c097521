package endpointcell_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/nodesync"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/endpoint/endpointcell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/policycell"
)

// TestIPAMKubernetes: with --ipam=kubernetes and no --node-ip, the agent
// takes its node IP from its Node's InternalIP, says in `apiary status`
// that it waits for the Node's spec.podCIDRs and refuses endpoints with
// 503 meanwhile; once the real kube-controller-manager (node IPAM
// controller) has allocated the CIDRs, endpoints get addresses from this
// node's CIDRs, not another node's.
func TestIPAMKubernetes(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs() // identity-allocation-mode crd (Kubernetes, no kvstore)
	ctx := context.Background()
	cs := srv.Clientset()
	for name, ip := range map[string]string{"node-a": "192.0.2.10", "node-b": "192.0.2.11"} {
		n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name},
			{Type: corev1.NodeExternalIP, Address: "203.0.113.1"}, {Type: corev1.NodeInternalIP, Address: ip}}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	socket := filepath.Join(t.TempDir(), "apiary.sock")
	var local localnode.Store
	celltest.StartWithFlags(t, []string{
		"socket-path=" + socket, "state-dir=" + t.TempDir(), "cluster-name=c1", "cluster-id=1",
		"node-name=node-a", "ipam=kubernetes", "k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken),
	},
		api.Cell, status.Cell, localnode.Cell, statedir.Cell, kvstorecell.Cell, store.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, k8s.Cell, nodesync.Cell, endpointcell.Cell,
		datapathtest.CellOf(datapathtest.New()), celltest.Capture(&local))
	c := client.New(socket)
	t.Cleanup(c.Close)
	if ip := local.Get().IP; ip != netip.MustParseAddr("192.0.2.10") {
		t.Fatalf("node IP %s, want the Node's InternalIP 192.0.2.10", ip)
	}

	celltest.Eventually(t, "status says IPAM waits for node-a's spec.podCIDRs", func() bool {
		st, err := c.Status(ctx)
		line := (*models.StatusEntry)(nil)
		if err == nil {
			line = statusLine(st, "IPAM")
		}
		return line != nil && line.State == models.StateWarning && line.Message == "Waiting for spec.podCIDRs of node node-a"
	})
	req := models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: []string{"k8s:app=web"}}
	_, err := c.EndpointPut(ctx, 1, req)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable || !strings.Contains(apiErr.Message, "spec.podCIDRs of node node-a") {
		t.Fatalf("PUT before the CIDRs: %v, want 503 naming what the IPAM waits for", err)
	}

	kcm := srv.StartControllerManager(t, k8stest.NodeIPAM{
		ClusterCIDRs: []string{"10.244.0.0/16", "fd00:10:244::/56"}, MaskSizeIPv4: 24, MaskSizeIPv6: 64})
	var cidrs map[string][]string
	celltest.Eventually(t, "kube-controller-manager allocates both nodes' pod CIDRs", func() bool {
		select {
		case <-kcm.Exited():
			t.Fatalf("kube-controller-manager exited:\n%s", kcm.LogTail(30))
		default:
		}
		cidrs = map[string][]string{}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, n := range nodes.Items {
			if len(n.Spec.PodCIDRs) == 2 {
				cidrs[n.Name] = n.Spec.PodCIDRs
			}
		}
		return len(cidrs) == 2
	})
	v4, v6 := netip.MustParsePrefix(cidrs["node-a"][0]), netip.MustParsePrefix(cidrs["node-a"][1])
	if v4 == netip.MustParsePrefix(cidrs["node-b"][0]) {
		t.Fatalf("both nodes got %s", v4)
	}
	var ep *models.Endpoint
	celltest.Eventually(t, "an endpoint gets addresses once the CIDRs are known", func() bool {
		ep, err = c.EndpointPut(ctx, 1, req)
		return err == nil
	})
	if !v4.Contains(netip.MustParseAddr(ep.IPv4)) || !v6.Contains(netip.MustParseAddr(ep.IPv6)) {
		t.Fatalf("endpoint addresses %s %s, want in node-a's CIDRs %s %s", ep.IPv4, ep.IPv6, v4, v6)
	}
	if got := local.Get(); got.IPv4AllocCIDR != v4 || got.IPv6AllocCIDR != v6 {
		t.Errorf("local node CIDRs %s %s, want %s %s", got.IPv4AllocCIDR, got.IPv6AllocCIDR, v4, v6)
	}
	celltest.Eventually(t, "status shows the CIDRs", func() bool {
		st, err := c.Status(ctx)
		if err != nil {
			return false
		}
		line := statusLine(st, "IPAM")
		return line != nil && line.State == models.StateOk &&
			line.Message == "kubernetes: "+v4.String()+", "+v6.String()+", 2 addresses allocated"
	})
}
