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
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/datapath/datapathtest"
)

// TestRestoredEndpointRelabelledByListing: an endpoint restored from the
// state dir whose pod's labels changed while the agent was down has its
// pod's current labels when the cache-sync gate opens (the pods' and
// namespaces' initial listings relabel every endpoint once).
func TestRestoredEndpointRelabelledByListing(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs() // identities are CiliumIdentities (mode crd: Kubernetes, no kvstore)
	cs := srv.Clientset()
	ctx := context.Background()
	createWebPod(t, cs, "")
	f := datapathtest.New()
	stateDir, socket := t.TempDir(), filepath.Join(t.TempDir(), "apiary.sock")
	start := func() (*client.Client, k8s.CacheSync, func()) {
		var gate k8s.CacheSync
		h := celltest.New(t, podAgentFlags(srv, socket, stateDir), podAgentCells(f, celltest.Capture(&gate))...)
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
		c := client.New(socket)
		stopped := false
		stop := func() {
			if stopped {
				return
			}
			stopped = true
			c.Close()
			if err := h.Stop(ctx); err != nil {
				t.Errorf("stop: %v", err)
			}
		}
		t.Cleanup(stop)
		return c, gate, stop
	}

	c, _, stop := start()
	netns := fakeNetNS(t, "web-1")
	ep, err := c.EndpointPut(ctx, 1, models.EndpointRequest{NetNSPath: netns, PodNamespace: "prod", PodName: "web-1"})
	if err != nil || !slices.Contains(ep.Labels, "k8s:app=web") {
		t.Fatalf("PUT /v1/endpoint/1: %+v, %v; want label k8s:app=web", ep, err)
	}
	stop()

	pod, err := cs.CoreV1().Pods("prod").Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels["app"] = "api"
	if _, err := cs.CoreV1().Pods("prod").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	c, gate, _ := start()
	if err := gate.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	ep, err = c.Endpoint(ctx, 1)
	if err != nil || !slices.Contains(ep.Labels, "k8s:app=api") || slices.Contains(ep.Labels, "k8s:app=web") {
		t.Fatalf("restored endpoint at the gate: %+v, %v; want its pod's current label k8s:app=api", ep, err)
	}
}
