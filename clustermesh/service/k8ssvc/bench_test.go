package k8ssvc

import (
	"fmt"
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

// benchInputs returns n Services of one port and, for each, two versions
// of its slice: 10 endpoints and 11.
func benchInputs(n int) ([]*corev1.Service, [][2]*discoveryv1.EndpointSlice) {
	svcs := make([]*corev1.Service, n)
	sls := make([][2]*discoveryv1.EndpointSlice, n)
	for i := range n {
		name := fmt.Sprintf("svc-%d", i)
		svcs[i] = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, ResourceVersion: "1"},
			Spec: corev1.ServiceSpec{ClusterIP: fmt.Sprintf("10.%d.%d.%d", 96+i>>16, byte(i>>8), byte(i)), Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
		for v := range 2 {
			port, pname := int32(8080), "http"
			sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name + "-abcde", ResourceVersion: fmt.Sprint(2 + v),
				Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
				Ports: []discoveryv1.EndpointPort{{Name: &pname, Port: &port}}}
			for j := range 10 + v {
				k := i<<6 | j
				sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("%d.%d.%d.%d", 11+k>>24, byte(k>>16), byte(k>>8), byte(k))}})
			}
			sls[i][v] = sl
		}
	}
	return svcs, sls
}

// BenchmarkWatcherChange times an EndpointSlice change of one of 10,000
// services through the watcher, and through the converter and the manager
// alone (a manager that writes nothing): the watcher's own share.
func BenchmarkWatcherChange(b *testing.B) {
	const n = 10000
	svcs, sls := benchInputs(n)
	for _, mode := range []string{"watcher", "converter"} {
		b.Run(mode, func(b *testing.B) {
			m := svcmanager.New(nil, svcmanager.Node{Name: "n1"}, slog.New(slog.DiscardHandler))
			w := NewWatcher(service.NewCache(), nil, cluster.Info{ClusterName: "c1", ClusterID: 1}, m)
			conv := svcmanager.NewConverter()
			for i := range n {
				if mode == "watcher" {
					w.Service(k8s.Event[*corev1.Service]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: "bench", Name: svcs[i].Name}, Object: svcs[i]})
					w.EndpointSlice(k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: "bench", Name: sls[i][0].Name}, Object: sls[i][0]})
				} else {
					m.Upsert(svcmanager.SourceKubernetes, conv.Convert(svcs[i], sls[i][:1]))
				}
			}
			synced(w)
			b.ResetTimer()
			for j := range b.N {
				i := (j / 2 * 7919) % n
				sl := sls[i][(j+1)%2]
				if mode == "watcher" {
					w.EndpointSlice(k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: "bench", Name: sl.Name}, Object: sl})
				} else {
					m.Upsert(svcmanager.SourceKubernetes, conv.Convert(svcs[i], []*discoveryv1.EndpointSlice{sl}))
				}
			}
		})
	}
}
