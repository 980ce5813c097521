package k8spods_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
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

// podAgentFlags are the flags of an agent on node-a (pod CIDR
// 10.0.1.0/24) of cluster c1 reading srv as its admin.
func podAgentFlags(srv *k8stest.Server, socket, stateDir string) []string {
	return []string{
		"socket-path=" + socket, "state-dir=" + stateDir, "cluster-name=c1", "cluster-id=1",
		"node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24",
		"k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken),
	}
}

// podAgentCells are the cells of an agent whose endpoints take their
// labels from the pod watcher, on the fake datapath f, plus extra.
func podAgentCells(f *datapathtest.Fake, extra ...cell.Cell) []cell.Cell {
	return append([]cell.Cell{api.Cell, status.Cell, localnode.Cell, statedir.Cell, kvstorecell.Cell, store.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, endpointcell.Cell, datapathtest.CellOf(f),
		k8s.Cell, k8spods.Cell}, extra...)
}

// createWebPod creates namespace prod (team=a) and its pod web-1
// (app=web, service account sa when not empty) on node-a.
func createWebPod(t *testing.T, cs kubernetes.Interface, sa string) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"team": "a"}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CoreV1().Pods("prod").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web-1", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node-a", ServiceAccountName: sa,
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// fakeNetNS returns the path of a file standing for a pod's netns (the
// fake datapath only needs it to exist).
func fakeNetNS(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
