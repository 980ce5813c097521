package k8ssvc_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode/nodesync"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

// hintedEndpoint is a ready endpoint with a zone hint.
func hintedEndpoint(zone, addr string) discoveryv1.Endpoint {
	ep := endpoint(nil, addr)
	ep.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: zone}}}
	return ep
}

// TestTopologyAwareRouting: with a real kube-apiserver, the agent of a
// node whose Node is labelled topology.kubernetes.io/zone=a balances a
// service whose EndpointSlice hints every endpoint to the endpoints
// hinted for zone a only; relabelled to zone b, to zone b's; once an
// endpoint has no hint, to all of them (kube-proxy's rule).
func TestTopologyAwareRouting(t *testing.T) {
	c := newCluster(t, "c1", 1)
	ctx := context.Background()
	node, err := c.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a",
		Labels: map[string]string{corev1.LabelTopologyZone: "a"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.apply(t, k8sService("web", nil, "10.96.0.10"),
		slice("web", "web-1", hintedEndpoint("a", "10.1.0.1"), hintedEndpoint("b", "10.1.0.2"), hintedEndpoint("a", "10.1.0.3")))
	w := svcmanagertest.New()
	startAgent(t, c, "node-a", "", withWriter(w), nodesync.Cell)
	wantMaps := func(what string, backends ...string) {
		t.Helper()
		var tcp, udp []string
		for _, b := range backends {
			tcp = append(tcp, b+":8080/TCP(active)")
			udp = append(udp, b+":5353/UDP(active)")
		}
		want := []string{
			"10.96.0.10:53/UDP ClusterIP -> " + strings.Join(udp, " "),
			"10.96.0.10:80/TCP ClusterIP -> " + strings.Join(tcp, " "),
		}
		celltest.Eventually(t, what, func() bool { return slices.Equal(ours(w), want) })
	}
	wantMaps("zone a's endpoints", "10.1.0.1", "10.1.0.3")

	node.Labels[corev1.LabelTopologyZone] = "b"
	if _, err := c.cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantMaps("zone b's endpoint after the relabel", "10.1.0.2")

	c.applySlice(t, slice("web", "web-1", hintedEndpoint("a", "10.1.0.1"), endpoint(nil, "10.1.0.2"), hintedEndpoint("a", "10.1.0.3")))
	wantMaps("every endpoint once one has no hint", "10.1.0.1", "10.1.0.2", "10.1.0.3")
}
