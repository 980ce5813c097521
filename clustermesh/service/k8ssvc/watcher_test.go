package k8ssvc

import (
	"log/slog"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

func testService(name, ip string, annotations map[string]string) k8s.Event[*corev1.Service] {
	return k8s.Event[*corev1.Service]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: "default", Name: name},
		Object: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: "1", Annotations: annotations},
			Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}}
}

func testSlice(name, svc, rv string, addrs ...string) k8s.Event[*discoveryv1.EndpointSlice] {
	port := int32(8080)
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv,
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Port: &port}}}
	for _, a := range addrs {
		sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	return k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: "default", Name: name}, Object: sl}
}

func sliceDeleted(name string) k8s.Event[*discoveryv1.EndpointSlice] {
	return k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Delete, Key: k8s.Key{Namespace: "default", Name: name}}
}

// synced hands w both streams' Sync.
func synced(w *Watcher) {
	w.Service(k8s.Event[*corev1.Service]{Kind: k8s.Sync})
	w.EndpointSlice(k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Sync})
}

// TestWatcherForgets: what the watcher's converter keeps of a Service
// and its slices goes with them, also when a slice moves to another
// service.
func TestWatcherForgets(t *testing.T) {
	m := svcmanager.New(nil, svcmanager.Node{Name: "n1"}, slog.New(slog.DiscardHandler))
	w := NewWatcher(service.NewCache(), nil, cluster.Info{ClusterName: "c1", ClusterID: 1}, m)
	synced(w)
	w.Service(testService("web", "10.96.0.10", nil))
	w.EndpointSlice(testSlice("web-a", "web", "2", "10.0.1.1"))
	w.EndpointSlice(testSlice("web-b", "web", "3", "10.0.1.1"))
	web := w.services[k8s.Key{Namespace: "default", Name: "web"}]
	if n := web.slot.Slices(); n != 2 {
		t.Fatalf("the converter keeps %d slices of web, want 2", n)
	}
	if st := m.Stats(); st.Backends != 1 {
		t.Errorf("manager holds %d backends, want 1", st.Backends)
	}
	w.EndpointSlice(testSlice("web-b", "other", "4", "10.0.1.1"))
	if n := web.slot.Slices(); n != 1 {
		t.Errorf("after web-b moved to other the converter keeps %d slices of web, want 1", n)
	}
	w.EndpointSlice(sliceDeleted("web-a"))
	if n := web.slot.Slices(); n != 0 {
		t.Errorf("after web-a's deletion the converter keeps %d slices of web, want none", n)
	}
	w.Service(k8s.Event[*corev1.Service]{Kind: k8s.Delete, Key: k8s.Key{Namespace: "default", Name: "web"}})
	if web.slot != (svcmanager.Slot{}) {
		t.Errorf("after web's deletion the watcher keeps its converter's record")
	}
	// Only "other" is left, with its slice web-b and no Service.
	if len(w.services) != 1 || w.services[k8s.Key{Namespace: "default", Name: "other"}] == nil || len(w.owner) != 1 {
		t.Errorf("the watcher keeps %d services and %d slices, want other's state and one slice", len(w.services), len(w.owner))
	}
	w.EndpointSlice(sliceDeleted("web-b"))
	if len(w.services) != 0 || len(w.owner) != 0 {
		t.Errorf("the watcher keeps %d services and %d slices, want none", len(w.services), len(w.owner))
	}
}

// TestWatcherInitialSync: until both listings are in, nothing reaches
// the manager or the cache; then every service does once, with all its
// slices, whichever came first. After that, each event is handed on: a
// slice that moves to another service leaves the first one, and a
// service that stops being global leaves the cache.
func TestWatcherInitialSync(t *testing.T) {
	m := svcmanager.New(nil, svcmanager.Node{Name: "n1"}, slog.New(slog.DiscardHandler))
	var changes []string
	m.Observe(func(c svcmanager.Change) { changes = append(changes, c.NamespacedName) }, svcmanager.SourceKubernetes)
	cache := service.NewCache()
	w := NewWatcher(cache, nil, cluster.Info{ClusterName: "c1", ClusterID: 1}, m)
	global := map[string]string{svcmanager.AnnotationGlobal: "true"}
	w.EndpointSlice(testSlice("web-a", "web", "2", "10.0.1.1"))
	w.Service(testService("web", "10.96.0.10", global))
	w.EndpointSlice(testSlice("web-b", "web", "3", "10.0.1.2", "10.0.1.3"))
	w.Service(testService("db", "10.96.0.11", nil))
	w.EndpointSlice(testSlice("db-a", "db", "4", "10.0.2.1"))
	w.Service(k8s.Event[*corev1.Service]{Kind: k8s.Sync})
	if len(changes) != 0 || w.Synced() || cache.Len() != 0 {
		t.Fatalf("before the slices' Sync: %d changes reached the manager (%v), synced %v, %d in the cache; want none", len(changes), changes, w.Synced(), cache.Len())
	}
	w.EndpointSlice(k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Sync})
	if !w.Synced() || !slices.Equal(changes, []string{"default/db", "default/web"}) {
		t.Fatalf("after both Syncs: synced %v, the manager got %v; want default/db and default/web once each", w.Synced(), changes)
	}
	if st := m.Stats(); st.Backends != 4 {
		t.Errorf("the manager holds %d backends, want 4", st.Backends)
	}
	if cache.Len() != 1 {
		t.Errorf("the cache holds %d services, want the global one", cache.Len())
	}

	changes = nil
	w.EndpointSlice(testSlice("web-b", "db", "5", "10.0.1.2", "10.0.1.3"))
	if !slices.Equal(changes, []string{"default/web", "default/db"}) {
		t.Errorf("a slice moving from web to db changed %v, want web then db", changes)
	}
	if st := m.Stats(); st.Backends != 4 {
		t.Errorf("after the move the manager holds %d backends, want 4", st.Backends)
	}
	w.Service(testService("web", "10.96.0.10", nil))
	if cache.Len() != 0 {
		t.Errorf("web is no longer global, but the cache holds %d services", cache.Len())
	}
}
