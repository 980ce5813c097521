package svcmanagertest

import (
	"fmt"
	"log/slog"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// benchServices is how many services the benchmarks hold, benchBackends
// the endpoints of each.
const (
	benchServices = 1000
	benchBackends = 10
)

// benchService returns service i and its slice; variant picks the last
// endpoint's address, so that two variants differ by one backend.
func benchService(i, variant int) (*corev1.Service, *discoveryv1.EndpointSlice) {
	name := fmt.Sprintf("svc-%d", i)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, ResourceVersion: "1"},
		Spec: corev1.ServiceSpec{ClusterIP: fmt.Sprintf("10.96.%d.%d", i/250, i%250+1),
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	port, proto, pname := int32(8080), corev1.ProtocolTCP, "http"
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name + "-1", ResourceVersion: fmt.Sprint(2 + variant),
		Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: &pname, Port: &port, Protocol: &proto}}}
	for j := range benchBackends {
		addr := fmt.Sprintf("10.%d.%d.%d", 1+i/250, i%250, j+1)
		if j == benchBackends-1 {
			addr = fmt.Sprintf("10.%d.%d.%d", 1+i/250, i%250, 100+variant)
		}
		sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{addr}})
	}
	return svc, sl
}

// SliceChange measures the control plane's path from an EndpointSlice
// change to the writer's call: the changed slice converted (a
// svcmanager.Converter, as the Kubernetes watcher's), the frontends computed and
// compared, and the one changed frontend written through w, with 1,000
// services of 10 backends in the manager. RawWrite is the same writes
// without the control plane. The ratio (goal <= 1.5x) is
// hack/bench/cmd/svcbench's: the same path with the BPF maps' writer on
// pinned maps, 10,000 services, against raw map writes.
func SliceChange(b *testing.B, w datapath.LBMapWriter) {
	m := svcmanager.New(w, svcmanager.Node{Name: "node1"}, slog.New(slog.DiscardHandler))
	conv := svcmanager.NewConverter()
	type input struct {
		svc *corev1.Service
		sl  [2]*discoveryv1.EndpointSlice
	}
	in := make([]input, benchServices)
	for i := range in {
		svc, a := benchService(i, 0)
		_, c := benchService(i, 1)
		in[i] = input{svc, [2]*discoveryv1.EndpointSlice{a, c}}
		m.Upsert(svcmanager.SourceKubernetes, conv.Convert(svc, []*discoveryv1.EndpointSlice{a}))
	}
	if err := m.Reconcile(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		x := in[i%benchServices]
		sl := x.sl[(i/benchServices+1)%2]
		m.Upsert(svcmanager.SourceKubernetes, conv.Convert(x.svc, []*discoveryv1.EndpointSlice{sl}))
	}
	if st := m.Stats(); st.Failures > 0 {
		b.Fatalf("writes failed: %v", st.LastError)
	}
}

// RawWrite measures the same writes as SliceChange handed to w directly,
// precomputed.
func RawWrite(b *testing.B, w datapath.LBMapWriter) {
	node := svcmanager.Node{Name: "node1"}
	svcs := make([][2]datapath.LBService, benchServices)
	var initial []datapath.LBService
	for i := range svcs {
		for v := range 2 {
			svc, sl := benchService(i, v)
			svcs[i][v] = svcmanager.Desired(svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl}), nil, node)[0]
		}
		initial = append(initial, svcs[i][0])
	}
	if _, _, err := w.ReconcileServices(slices.Values(initial)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := w.UpsertService(svcs[i%benchServices][(i/benchServices+1)%2]); err != nil {
			b.Fatal(err)
		}
	}
}

// Sync measures the initial sync's control plane: 1,000 Services with
// their slices converted (a new Converter) and handed to a fresh manager, then its
// Reconcile handing every frontend to w.
func Sync(b *testing.B, w datapath.LBMapWriter) {
	type input struct {
		svc *corev1.Service
		sl  *discoveryv1.EndpointSlice
	}
	in := make([]input, benchServices)
	for i := range in {
		in[i].svc, in[i].sl = benchService(i, 0)
	}
	for b.Loop() {
		m := svcmanager.New(w, svcmanager.Node{Name: "node1"}, slog.New(slog.DiscardHandler))
		conv := svcmanager.NewConverter()
		for _, x := range in {
			m.Upsert(svcmanager.SourceKubernetes, conv.Convert(x.svc, []*discoveryv1.EndpointSlice{x.sl}))
		}
		if err := m.Reconcile(); err != nil {
			b.Fatal(err)
		}
	}
}
