package main

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// input is one Service with its EndpointSlice of b endpoints ([0]) and
// of b+1 ([1]: one backend added), as the informers hand them over.
type input struct {
	svc    *corev1.Service
	slices [2]*discoveryv1.EndpointSlice
}

// inputs returns n ClusterIP Services (TCP 80 -> 8080) of b endpoints
// each; every endpoint is a pod of its own.
func inputs(n, b int) []input {
	out := make([]input, n)
	for i := range out {
		name := fmt.Sprintf("svc-%d", i)
		out[i].svc = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, ResourceVersion: "1"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP(i).String(),
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
		for v := range 2 {
			out[i].slices[v] = slice(name, i, b+v)
		}
	}
	return out
}

func slice(svc string, i, endpoints int) *discoveryv1.EndpointSlice {
	port, proto, pname := int32(8080), corev1.ProtocolTCP, "http"
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: svc + "-abcde", ResourceVersion: fmt.Sprint(2 + endpoints),
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: &pname, Port: &port, Protocol: &proto}}}
	ready := true
	for j := range endpoints {
		sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{backendIP(i, j).String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
	}
	return sl
}

// clusterIP is service i's address in 10.96.0.0/12.
func clusterIP(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(96 + i>>16), byte(i >> 8), byte(i)})
}

// backendIP is the address of service i's endpoint j (j < 64).
func backendIP(i, j int) netip.Addr {
	k := i<<6 | j
	return netip.AddrFrom4([4]byte{byte(11 + k>>24), byte(k >> 16), byte(k >> 8), byte(k)})
}
