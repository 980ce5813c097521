package k8spods_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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

// TestPodLabels runs against a real kube-apiserver: an endpoint created
// with its pod's namespace and name takes the pod's labels; a change of
// the pod's labels, then of its namespace's, re-labels it and gives it a
// new identity.
func TestPodLabels(t *testing.T) {
	srv := k8stest.Start(t)
	cs := srv.Clientset()
	ctx := context.Background()
	mustCreate(t, cs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"team": "a"}}})
	_, err := cs.CoreV1().Pods("prod").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web-1", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node-a", ServiceAccountName: "web-sa",
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	socket := filepath.Join(t.TempDir(), "apiary.sock")
	celltest.StartWithFlags(t, []string{
		"socket-path=" + socket, "state-dir=" + t.TempDir(), "cluster-name=c1", "cluster-id=1",
		"node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24",
		"k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken),
	}, api.Cell, status.Cell, localnode.Cell, statedir.Cell, kvstorecell.Cell, store.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, endpointcell.Cell, datapathtest.CellOf(datapathtest.New()),
		k8s.Cell, k8spods.Cell)
	c := client.New(socket)
	t.Cleanup(c.Close)

	netns := filepath.Join(t.TempDir(), "web-1")
	if err := os.WriteFile(netns, nil, 0o600); err != nil {
		t.Fatal(err)
	}
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

func mustCreate(t *testing.T, cs kubernetes.Interface, ns *corev1.Namespace) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
