package hostport_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager/hostport"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

// TestHostPortsFromAPIServer: with a real kube-apiserver, a pod of this
// node with a hostPort is in the initial reconcile as HostPort
// frontends (the surrogate and the node's address) to its address; a
// pod of another node is not; the pod's deletion deletes them.
func TestHostPortsFromAPIServer(t *testing.T) {
	srv := k8stest.Start(t)
	cs := srv.Clientset()
	ctx := context.Background()
	mk := func(name, node, ip string) {
		t.Helper()
		p, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "web", Image: "web",
				Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase, p.Status.PodIP, p.Status.PodIPs = corev1.PodRunning, ip, []corev1.PodIP{{IP: ip}}
		if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("web-a", "node-a", "10.1.0.5")
	mk("web-b", "node-b", "10.2.0.5")
	w := svcmanagertest.New()
	celltest.StartWithFlags(t, []string{"node-name=node-a", "node-ip=192.0.2.10", "k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken)},
		localnode.Cell, status.Cell, k8s.Cell, svcmanagercell.Cell, hostport.Cell,
		cell.Provide(func() datapath.LBMapWriter { return w }))
	want := []string{
		"0.0.0.0:8080/TCP HostPort -> 10.1.0.5:80/TCP(active)",
		"192.0.2.10:8080/TCP HostPort -> 10.1.0.5:80/TCP(active)",
	}
	ours := func() []string {
		return slices.DeleteFunc(w.Dump(), func(s string) bool { return !strings.Contains(s, "HostPort") })
	}
	celltest.Eventually(t, "the pod's host port in the initial reconcile", func() bool {
		calls := w.Calls()
		return len(calls) > 0 && calls[0] == "reconcile 2" && slices.Equal(ours(), want)
	})
	if err := cs.CoreV1().Pods("default").Delete(ctx, "web-a", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the host port deleted with the pod", func() bool { return len(ours()) == 0 })
}
