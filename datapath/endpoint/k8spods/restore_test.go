package k8spods_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/endpoint/endpointcell"
	"github.com/apiary-net/apiary/datapath/endpoint/k8spods"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/policycell"
)

// TestRestoredEndpointRelabelledByListing: an endpoint restored from the
// state dir whose pod's labels changed while the agent was down has its
// pod's current labels when the cache-sync gate opens (the pods' and
// namespaces' initial listings relabel every endpoint once).
func TestRestoredEndpointRelabelledByListing(t *testing.T) {
	srv := k8stest.Start(t)
	cs := srv.Clientset()
	ctx := context.Background()
	mustCreate(t, cs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"team": "a"}}})
	_, err := cs.CoreV1().Pods("prod").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web-1", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := datapathtest.New()
	stateDir, socket := t.TempDir(), filepath.Join(t.TempDir(), "apiary.sock")
	start := func() (*client.Client, k8s.CacheSync, func()) {
		var gate k8s.CacheSync
		h := celltest.New(t, []string{
			"socket-path=" + socket, "state-dir=" + stateDir, "cluster-name=c1", "cluster-id=1",
			"node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24",
			"k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken),
		}, api.Cell, status.Cell, localnode.Cell, statedir.Cell, kvstorecell.Cell, store.Cell,
			identitycell.Cell, policycell.Cell, ipcachecell.Cell, endpointcell.Cell, datapathtest.CellOf(f),
			k8s.Cell, k8spods.Cell, celltest.Capture(&gate))
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
	netns := filepath.Join(t.TempDir(), "web-1")
	if err := os.WriteFile(netns, nil, 0o600); err != nil {
		t.Fatal(err)
	}
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
