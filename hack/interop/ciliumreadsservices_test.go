package interop_test

import (
	"reflect"
	"testing"
	"time"

	cmstore "github.com/cilium/cilium/pkg/clustermesh/store"
	"github.com/cilium/cilium/pkg/loadbalancer"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/hack/interop"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// TestKVStoreMeshReadsApiaryServices: an apiary agent of cluster
// apiary1 (id 7) reads its Services and EndpointSlices from a real
// kube-apiserver and, as the cluster's publisher, publishes the shared
// global one at cilium/state/services/v1/apiary1/<ns>/<name>. Cilium's
// KVStoreMesh counts it as the cluster's one shared service and caches
// the same value under cilium/cache/services/v1/apiary1/; the watch
// store a Cilium agent runs behind KVStoreMesh decodes and validates it
// (pkg/clustermesh/store's ClusterService Unmarshal and validators) into
// the frontends, backends, ports, cluster and flags Cilium's own
// converter would give; a backend change and the service no longer
// being shared reach the cache and that watcher.
func TestKVStoreMeshReadsApiaryServices(t *testing.T) {
	remote := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	kube := k8stest.Start(t)
	kube.InstallCRDs() // the agent also watches CNPs and CCNPs
	cs := kube.Clientset()
	// Before the agent starts: web, global and shared, with a ready
	// endpoint in each of two slices and one not ready; db, global but
	// not shared; plain, not global.
	applyService(t, cs, k8sService("web", map[string]string{"service.cilium.io/global": "true"}, "10.96.0.10"),
		k8sSlice("web", "web-1", k8sEndpoint(nil, "10.7.1.5"), k8sEndpoint(ptr(false), "10.7.1.9")),
		k8sSlice("web", "web-2", k8sEndpoint(ptr(true), "10.7.2.5")))
	applyService(t, cs, k8sService("db", map[string]string{"service.cilium.io/global": "true", "service.cilium.io/shared": "false"}, "10.96.0.11"),
		k8sSlice("db", "db-1", k8sEndpoint(nil, "10.7.1.6")))
	applyService(t, cs, k8sService("plain", nil, "10.96.0.12"), k8sSlice("plain", "plain-1", k8sEndpoint(nil, "10.7.1.7")))
	interop.StartApiaryAgent(t, remote, "apiary1", 7, "node-1", "192.0.2.11",
		"k8s-kubeconfig-path="+kube.WriteKubeconfig(k8stest.AdminToken))

	raw := remote.Client()
	const webKey = "cilium/state/services/v1/apiary1/default/web"
	celltest.EventuallyWithin(t, "web and the services canary published", time.Minute, func() bool {
		return get(t, raw, webKey) != "" && get(t, raw, "cilium/synced/apiary1/cilium/state/services/v1") != ""
	})
	if got := list(t, raw, "cilium/state/services/v1/"); len(got) != 1 {
		t.Fatalf("apiary published %v, want only apiary1/default/web", got)
	}

	local := kvstoretest.StartServer(t)
	km := interop.StartKVStoreMesh(t, "cilium-mesh", 1, local, map[string]*kvstoretest.Server{"apiary1": remote})
	sharedServices := func() int64 {
		for _, rc := range km.Status() {
			if rc.Name == "apiary1" && rc.Ready && rc.Synced != nil && rc.Synced.Services {
				return rc.NumSharedServices
			}
		}
		return -1
	}
	if !eventually(60*time.Second, func() bool { return sharedServices() == 1 }) {
		t.Fatalf("KVStoreMesh status of apiary1: %s", dump(km.Status()))
	}
	t.Logf("KVStoreMesh status of apiary1: %s", dump(km.Status()))

	lraw := local.Client()
	checkServicesMirror(t, raw, lraw)
	if get(t, lraw, "cilium/synced/apiary1/cilium/cache/services/v1") == "" {
		t.Error("KVStoreMesh wrote no services canary for apiary1")
	}
	const cacheKey = "cilium/cache/services/v1/apiary1/default/web"
	checkCiliumService(t, "default/web", get(t, lraw, cacheKey),
		webService(backend("10.7.1.5"), backend("10.7.2.5")))

	agent := interop.WatchCiliumServices(t, local, "apiary1", 7)
	waitCiliumServices(t, agent, "a Cilium agent's watch store holds web", map[string]cmstore.ClusterService{
		"default/web": webService(backend("10.7.1.5"), backend("10.7.2.5"))})

	// A third backend: the new value reaches the cache and the agent.
	applyService(t, cs, nil, k8sSlice("web", "web-2", k8sEndpoint(ptr(true), "10.7.2.5"), k8sEndpoint(nil, "10.7.2.6")))
	want := webService(backend("10.7.1.5"), backend("10.7.2.5"), backend("10.7.2.6"))
	waitCiliumServices(t, agent, "the new backend in a Cilium agent's watch store", map[string]cmstore.ClusterService{"default/web": want})
	checkServicesMirror(t, raw, lraw)
	checkCiliumService(t, "default/web", get(t, lraw, cacheKey), want)

	// No longer shared: apiary deletes its key, KVStoreMesh its copy.
	web, err := cs.CoreV1().Services("default").Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web.Annotations["service.cilium.io/shared"] = "false"
	if _, err := cs.CoreV1().Services("default").Update(t.Context(), web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCiliumServices(t, agent, "web withdrawn from a Cilium agent's watch store", map[string]cmstore.ClusterService{})
	if get(t, raw, webKey) != "" || get(t, lraw, cacheKey) != "" {
		t.Errorf("web still published (%q) or cached (%q)", get(t, raw, webKey), get(t, lraw, cacheKey))
	}
	if !eventually(30*time.Second, func() bool { return sharedServices() == 0 }) {
		t.Errorf("KVStoreMesh status of apiary1 after web was unshared: %s", dump(km.Status()))
	}
}

// webService is default/web of apiary1 as Cilium's own converter
// (clustermesh-apiserver's) builds it from the Service of k8sService:
// both ClusterIP ports as frontends, the given backends.
func webService(backends ...map[string]cmstore.PortConfiguration) cmstore.ClusterService {
	s := cmstore.NewClusterService("web", "default")
	s.Cluster, s.ClusterID, s.IncludeExternal, s.Shared = "apiary1", 7, true, true
	s.Frontends["10.96.0.10"] = cmstore.PortConfiguration{
		"http": {Protocol: loadbalancer.TCP, Port: 80}, "dns": {Protocol: loadbalancer.UDP, Port: 53}}
	for _, b := range backends {
		for ip, pc := range b {
			s.Backends[ip] = pc
		}
	}
	s.Labels["app"], s.Selector["app"] = "web", "web"
	return s
}

// backend is a backend of web with the ports of k8sSlice.
func backend(ip string) map[string]cmstore.PortConfiguration {
	return map[string]cmstore.PortConfiguration{ip: {
		"http": {Protocol: loadbalancer.TCP, Port: 8080}, "dns": {Protocol: loadbalancer.UDP, Port: 5353}}}
}

// checkCiliumService decodes value, stored at <ns>/<name> below the
// cluster's prefix, as a Cilium agent does for a remote cluster's
// service, and compares it with want.
func checkCiliumService(t *testing.T, name, value string, want cmstore.ClusterService) {
	t.Helper()
	clusterID := uint32(7)
	got := cmstore.KeyCreator(cmstore.ClusterNameValidator("apiary1"), cmstore.NamespacedNameValidator(),
		cmstore.ClusterIDValidator(&clusterID))().(*cmstore.ValidatingClusterService)
	if err := got.Unmarshal(name, []byte(value)); err != nil {
		t.Fatalf("Cilium refuses service %s %s: %v", name, value, err)
	}
	if !reflect.DeepEqual(got.ClusterService, want) {
		t.Errorf("Cilium reads service %s as\n%s\nwant\n%s", name, dump(got.ClusterService), dump(want))
	}
}

// waitCiliumServices waits until the Cilium agent's watch store has
// synced and holds exactly want.
func waitCiliumServices(t *testing.T, s *interop.CiliumServices, what string, want map[string]cmstore.ClusterService) {
	t.Helper()
	var got map[string]cmstore.ClusterService
	if !eventually(30*time.Second, func() bool {
		var synced bool
		got, synced = s.Snapshot()
		if !synced || len(got) != len(want) {
			return false
		}
		for name, w := range want {
			if g, ok := got[name]; !ok || !reflect.DeepEqual(g, w) {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("%s: holds\n%s\nwant\n%s", what, dump(got), dump(want))
	}
}

// checkServicesMirror compares apiary1's published services with
// KVStoreMesh's copy.
func checkServicesMirror(t *testing.T, raw, lraw *clientv3.Client) {
	t.Helper()
	checkPrefixMirror(t, raw, lraw, "cilium/state/services/v1/apiary1/", "cilium/cache/services/v1/apiary1/")
}

// applyService creates or updates svc (when not nil) and the slices
// through the API server.
func applyService(t *testing.T, cs kubernetes.Interface, svc *corev1.Service, slices ...*discoveryv1.EndpointSlice) {
	t.Helper()
	ctx := t.Context()
	if svc != nil {
		if _, err := cs.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create service %s: %v", svc.Name, err)
		}
	}
	for _, sl := range slices {
		api := cs.DiscoveryV1().EndpointSlices(sl.Namespace)
		old, err := api.Get(ctx, sl.Name, metav1.GetOptions{})
		if err == nil {
			sl.ResourceVersion = old.ResourceVersion
			_, err = api.Update(ctx, sl, metav1.UpdateOptions{})
		} else {
			_, err = api.Create(ctx, sl, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("apply endpoint slice %s: %v", sl.Name, err)
		}
	}
}

// k8sService is default/<name> with label and selector app=<name>, the
// cluster IP and two named ports, http 80/TCP and dns 53/UDP.
func k8sService(name string, annotations map[string]string, clusterIP string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: annotations, Labels: map[string]string{"app": name}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name}, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}, {Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}},
		},
	}
}

// k8sSlice is an EndpointSlice of service svc with the ports http
// 8080/TCP and dns 5353/UDP.
func k8sSlice(svc, name string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports: []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr[int32](8080)},
			{Name: ptr("dns"), Protocol: ptr(corev1.ProtocolUDP), Port: ptr[int32](5353)}},
	}
}

// k8sEndpoint is an endpoint of a slice; ready nil leaves the condition
// unset (which counts as ready).
func k8sEndpoint(ready *bool, addrs ...string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

func ptr[T any](v T) *T { return &v }
