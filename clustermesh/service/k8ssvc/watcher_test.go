package k8ssvc

import (
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// TestWatcherForgets: what the watcher's converter keeps of a Service
// and its slices goes with them, also when a slice moves to another
// service.
func TestWatcherForgets(t *testing.T) {
	m := svcmanager.New(nil, svcmanager.Node{Name: "n1"}, slog.New(slog.DiscardHandler))
	w := newWatcher(service.NewCache(), nil, cluster.Info{ClusterName: "c1", ClusterID: 1}, m)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ResourceVersion: "1"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	sl := func(name, svc, rv string) *discoveryv1.EndpointSlice {
		port := int32(8080)
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{{Port: &port}}, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.1.1"}}}}
	}
	key := k8s.Key{Namespace: "default", Name: "web"}
	w.services[key] = svc
	w.refresh(key)
	w.sliceUpsert(k8s.Key{Namespace: "default", Name: "web-a"}, sl("web-a", "web", "2"))
	w.sliceUpsert(k8s.Key{Namespace: "default", Name: "web-b"}, sl("web-b", "web", "3"))
	if s, n := w.conv.Len(); s != 1 || n != 2 {
		t.Fatalf("converter keeps %d services, %d slices; want 1, 2", s, n)
	}
	if st := m.Stats(); st.Backends != 1 {
		t.Errorf("manager holds %d backends, want 1", st.Backends)
	}
	w.sliceUpsert(k8s.Key{Namespace: "default", Name: "web-b"}, sl("web-b", "other", "4"))
	w.sliceDelete(k8s.Key{Namespace: "default", Name: "web-a"})
	w.serviceDelete(key)
	if s, n := w.conv.Len(); s != 0 || n != 0 {
		t.Errorf("after the deletions the converter keeps %d services, %d slices", s, n)
	}
}
