package k8spods_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/datapath/datapathtest"
)

// TestPodLabels runs against a real kube-apiserver: an endpoint created
// with its pod's namespace and name takes the pod's labels; a change of
// the pod's labels, then of its namespace's, re-labels it and gives it a
// new identity.
func TestPodLabels(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs() // identities are CiliumIdentities (mode crd: Kubernetes, no kvstore)
	cs := srv.Clientset()
	ctx := context.Background()
	createWebPod(t, cs, "web-sa")

	socket := filepath.Join(t.TempDir(), "apiary.sock")
	celltest.StartWithFlags(t, podAgentFlags(srv, socket, t.TempDir()), podAgentCells(datapathtest.New())...)
	c := client.New(socket)
	t.Cleanup(c.Close)

	netns := fakeNetNS(t, "web-1")
	ep, err := c.EndpointPut(ctx, 1, models.EndpointRequest{NetNSPath: netns, PodNamespace: "prod", PodName: "web-1"})
	if err != nil {
		t.Fatalf("PUT /v1/endpoint/1: %v", err)
	}
	for _, want := range []string{"k8s:app=web", "k8s:io.cilium.k8s.namespace.labels.team=a",
		"k8s:io.cilium.k8s.policy.serviceaccount=web-sa", "k8s:io.cilium.k8s.policy.cluster=c1",
		"k8s:io.kubernetes.pod.namespace=prod"} {
		if !slices.Contains(ep.Labels, want) {
			t.Fatalf("endpoint labels %v lack %s", ep.Labels, want)
		}
	}
	if ep.PodNamespace != "prod" || ep.PodName != "web-1" {
		t.Fatalf("endpoint pod: %s/%s", ep.PodNamespace, ep.PodName)
	}
	first := ep.Identity

	pod, err := cs.CoreV1().Pods("prod").Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels["app"] = "api"
	if _, err := cs.CoreV1().Pods("prod").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := waitLabel(t, c, "k8s:app=api", first)

	ns, err := cs.CoreV1().Namespaces().Get(ctx, "prod", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels["team"] = "b"
	if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitLabel(t, c, "k8s:io.cilium.k8s.namespace.labels.team=b", second)
}

// waitLabel waits until endpoint 1 has label want and an identity other
// than old, and returns it.
func waitLabel(t *testing.T, c *client.Client, want string, old uint32) uint32 {
	t.Helper()
	var ep *models.Endpoint
	celltest.Eventually(t, "the endpoint is re-labelled with "+want, func() bool {
		var err error
		ep, err = c.Endpoint(context.Background(), 1)
		return err == nil && slices.Contains(ep.Labels, want) && ep.Identity != old && ep.State == "ready"
	})
	return ep.Identity
}
