package cepsync_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/endpoint/cepsync"
	"github.com/apiary-net/apiary/datapath/endpoint/endpointcell"
	"github.com/apiary-net/apiary/datapath/endpoint/k8spods"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/ipcache/k8scep"
	"github.com/apiary-net/apiary/policy/policycell"
	"github.com/apiary-net/apiary/policy/source"
)

// node is an agent of cluster c1 on the fake datapath, with identities
// and endpoints in the API server (mode crd).
type node struct {
	ipc    ipcache.IPCache
	client *client.Client
	hive   *hive.Hive
	stop   func()
}

func startNode(t *testing.T, srv *k8stest.Server, name, ip, podCIDR, stateDir string) *node {
	t.Helper()
	return startNodeOn(t, srv, datapathtest.New(), name, ip, podCIDR, stateDir)
}

// startNodeOn starts a node on the fake datapath f (which outlives the
// agent, as the kernel's state does).
func startNodeOn(t *testing.T, srv *k8stest.Server, f *datapathtest.Fake, name, ip, podCIDR, stateDir string) *node {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	n := &node{client: client.New(socket)}
	t.Cleanup(n.client.Close)
	n.hive = celltest.New(t, []string{
		"socket-path=" + socket, "state-dir=" + stateDir, "cluster-name=c1", "cluster-id=1",
		"node-name=" + name, "node-ip=" + ip, "pod-cidr=" + podCIDR,
		"k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken),
	},
		api.Cell, status.Cell, localnode.Cell, statedir.Cell, kvstorecell.Cell, store.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, endpointcell.Cell, datapathtest.CellOf(f),
		k8s.Cell, k8spods.Cell, k8scep.Cell, cepsync.Cell, celltest.Capture(&n.ipc), cell.Invoke(func(ipcache.IPCache) {}))
	if err := n.hive.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopped := false
	n.stop = func() {
		if !stopped {
			stopped = true
			if err := n.hive.Stop(context.Background()); err != nil {
				t.Errorf("stop: %v", err)
			}
		}
	}
	t.Cleanup(n.stop)
	return n
}

func createPod(t *testing.T, srv *k8stest.Server, name, nodeName string) {
	t.Helper()
	_, err := srv.Clientset().CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func fakeNetNS(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func ceps(srv *k8stest.Server) *k8stestCEPs {
	return &k8stestCEPs{srv: srv}
}

type k8stestCEPs struct{ srv *k8stest.Server }

func (c *k8stestCEPs) get(t *testing.T, name string) (*unstructured.Unstructured, bool) {
	t.Helper()
	obj, err := c.srv.Dynamic().Resource(k8s.CiliumEndpointResource).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	return obj, true
}

// TestCiliumEndpointAcrossNodes: a pod's endpoint on node A is published
// as its CiliumEndpoint (Cilium's schema, owned by the pod) and appears
// in node B's ipcache with A's identity and A as tunnel peer; deleting
// the endpoint deletes both. Pods of both nodes with the same labels
// share one identity.
func TestCiliumEndpointAcrossNodes(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	createPod(t, srv, "web-a", "node-a")
	createPod(t, srv, "web-b", "node-b")
	a := startNode(t, srv, "node-a", "192.0.2.10", "10.0.1.0/24", t.TempDir())
	b := startNode(t, srv, "node-b", "192.0.2.11", "10.0.2.0/24", t.TempDir())
	ctx := context.Background()

	epA, err := a.client.EndpointPut(ctx, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "a"), PodNamespace: "default", PodName: "web-a",
		NamedPorts: []models.NamedPort{{Name: "http", Port: 8080, Protocol: "TCP"}}})
	if err != nil {
		t.Fatal(err)
	}
	epB, err := b.client.EndpointPut(ctx, 7, models.EndpointRequest{NetNSPath: fakeNetNS(t, "b"), PodNamespace: "default", PodName: "web-b",
		NamedPorts: []models.NamedPort{{Name: "http", Port: 8080, Protocol: "TCP"}}})
	if err != nil {
		t.Fatal(err)
	}
	if epA.Identity != epB.Identity {
		t.Errorf("pods with the same labels on two nodes: identities %d and %d", epA.Identity, epB.Identity)
	}
	ipA := netip.MustParseAddr(epA.IPv4)

	var cep *unstructured.Unstructured
	celltest.Eventually(t, "web-a's CiliumEndpoint, ready", func() bool {
		obj, ok := ceps(srv).get(t, "web-a")
		if !ok {
			return false
		}
		state, _, _ := unstructured.NestedString(obj.Object, "status", "state")
		cep = obj
		return state == "ready"
	})
	st := cep.Object["status"].(map[string]any)
	id, _, _ := unstructured.NestedInt64(st, "identity", "id")
	addr, _, _ := unstructured.NestedSlice(st, "networking", "addressing")
	nodeIP, _, _ := unstructured.NestedString(st, "networking", "node")
	ports, _, _ := unstructured.NestedSlice(st, "named-ports")
	epID, _, _ := unstructured.NestedInt64(st, "id")
	if id != int64(epA.Identity) || nodeIP != "192.0.2.10" || epID != 1 || len(addr) != 1 ||
		addr[0].(map[string]any)["ipv4"] != epA.IPv4 || len(ports) != 1 {
		t.Fatalf("CiliumEndpoint status: %v", st)
	}
	if refs := cep.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].Name != "web-a" {
		t.Errorf("owner references: %v", refs)
	}

	celltest.Eventually(t, "web-a in node-b's ipcache with node-a's identity", func() bool {
		e, ok := b.ipc.Lookup(ipcache.HostPrefix(ipA))
		return ok && uint32(e.Identity) == epA.Identity && e.TunnelPeer == netip.MustParseAddr("192.0.2.10") &&
			e.Source == source.CustomResource && e.K8sPodName == "web-a" && len(e.NamedPorts) == 1
	})
	// Its own endpoint stays local on node-a.
	if e, ok := a.ipc.Lookup(ipcache.HostPrefix(ipA)); !ok || e.Source != source.Local {
		t.Errorf("node-a's entry of its own pod: %+v", e)
	}

	// A new identity (the pod's labels changed) reaches node-b.
	pods := srv.Clientset().CoreV1().Pods("default")
	pod, err := pods.Get(ctx, "web-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels["app"] = "api"
	if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var newID uint32
	celltest.Eventually(t, "web-a relabelled on node-a", func() bool {
		ep, err := a.client.Endpoint(ctx, 1)
		if err != nil {
			return false
		}
		newID = ep.Identity
		return ep.Identity != epA.Identity && ep.Identity != 0
	})
	celltest.Eventually(t, "node-b's ipcache has web-a's new identity", func() bool {
		e, ok := b.ipc.Lookup(ipcache.HostPrefix(ipA))
		return ok && uint32(e.Identity) == newID
	})

	if err := a.client.EndpointDelete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "web-a's CiliumEndpoint deleted", func() bool {
		_, ok := ceps(srv).get(t, "web-a")
		return !ok
	})
	celltest.Eventually(t, "web-a gone from node-b's ipcache", func() bool {
		_, ok := b.ipc.Lookup(ipcache.HostPrefix(ipA))
		return !ok
	})
}

// TestStaleCiliumEndpointsReconciled: a CiliumEndpoint of this node that
// no endpoint backs (left by an earlier run) is deleted at start; one of
// another node is left alone.
func TestStaleCiliumEndpointsReconciled(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	ri := srv.Dynamic().Resource(k8s.CiliumEndpointResource).Namespace("default")
	for name, nodeIP := range map[string]string{"stale": "192.0.2.10", "other-node": "192.0.2.99"} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
			"metadata": map[string]any{"name": name},
			"status": map[string]any{"identity": map[string]any{"id": int64(70000)},
				"networking": map[string]any{"node": nodeIP, "addressing": []any{map[string]any{"ipv4": "10.0.9.9"}}}}}}
		if _, err := ri.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	startNode(t, srv, "node-a", "192.0.2.10", "10.0.1.0/24", t.TempDir())
	celltest.Eventually(t, "the stale CiliumEndpoint deleted", func() bool {
		_, ok := ceps(srv).get(t, "stale")
		return !ok
	})
	if _, ok := ceps(srv).get(t, "other-node"); !ok {
		t.Error("another node's CiliumEndpoint was deleted")
	}
}

// TestRestartKeepsCiliumEndpoint: a restarted agent restores its
// endpoint with the identity the API server holds, before the endpoint
// regenerates, and keeps its CiliumEndpoint (the same object, not
// deleted as stale and created again).
func TestRestartKeepsCiliumEndpoint(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	createPod(t, srv, "web-a", "node-a")
	f := datapathtest.New()
	stateDir := t.TempDir()
	a := startNodeOn(t, srv, f, "node-a", "192.0.2.10", "10.0.1.0/24", stateDir)
	ctx := context.Background()
	ep, err := a.client.EndpointPut(ctx, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "a"), PodNamespace: "default", PodName: "web-a"})
	if err != nil {
		t.Fatal(err)
	}
	var uid string
	celltest.Eventually(t, "web-a's CiliumEndpoint", func() bool {
		obj, ok := ceps(srv).get(t, "web-a")
		if ok {
			uid = string(obj.GetUID())
		}
		return ok
	})
	a.stop()

	b := startNodeOn(t, srv, f, "node-a", "192.0.2.10", "10.0.1.0/24", stateDir)
	celltest.Eventually(t, "the endpoint restored and ready", func() bool {
		got, err := b.client.Endpoint(ctx, 1)
		return err == nil && got.State == "ready"
	})
	got, err := b.client.Endpoint(ctx, 1)
	if err != nil || got.Identity != ep.Identity {
		t.Fatalf("restored endpoint: %+v, %v; want identity %d", got, err, ep.Identity)
	}
	obj, ok := ceps(srv).get(t, "web-a")
	if !ok {
		t.Fatal("CiliumEndpoint deleted by the restart")
	}
	if string(obj.GetUID()) != uid {
		t.Fatalf("CiliumEndpoint after the restart: uid %s, want %s (created again)", obj.GetUID(), uid)
	}
	if id, _, _ := unstructured.NestedInt64(obj.Object, "status", "identity", "id"); id != int64(ep.Identity) {
		t.Errorf("CiliumEndpoint identity %d, want %d", id, ep.Identity)
	}
}
