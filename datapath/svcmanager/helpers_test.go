package svcmanager_test

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

type fakeWriter = svcmanagertest.Writer

var errFull = svcmanagertest.ErrFull

func newFakeWriter() *fakeWriter { return svcmanagertest.New() }

func render(s datapath.LBService) string { return svcmanagertest.Render(s) }

func renderAll(svcs []datapath.LBService) []string {
	out := make([]string, len(svcs))
	for i, s := range svcs {
		out[i] = render(s)
	}
	return out
}

// k8sService builds a Service of the given ClusterIPs, each port
// "name:port:target[:nodePort][/UDP]".
func k8sService(name string, ips []string, ports ...string) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: map[string]string{}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: ips}}
	if len(ips) > 0 {
		svc.Spec.ClusterIP = ips[0]
	}
	for _, p := range ports {
		proto := corev1.ProtocolTCP
		if before, ok := strings.CutSuffix(p, "/UDP"); ok {
			p, proto = before, corev1.ProtocolUDP
		}
		var pname, target string
		var port, nodePort int32
		parts := strings.Split(p, ":")
		pname, target = parts[0], parts[2]
		fmt.Sscan(parts[1], &port)
		if len(parts) > 3 {
			fmt.Sscan(parts[3], &nodePort)
		}
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: pname, Port: port, Protocol: proto,
			TargetPort: intstr.Parse(target), NodePort: nodePort})
	}
	return svc
}

// endpoint is one endpoint of a slice: "ip[@node][!r|!t|!x]" where !r is
// not ready, !t serving and terminating, !x terminating not serving.
func slice(name string, ports map[string]int32, eps ...string) *discoveryv1.EndpointSlice {
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}, AddressType: discoveryv1.AddressTypeIPv4}
	for n, p := range ports {
		proto := corev1.ProtocolTCP
		if strings.HasSuffix(n, "/UDP") {
			n, proto = strings.TrimSuffix(n, "/UDP"), corev1.ProtocolUDP
		}
		sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: ptr(n), Port: ptr(p), Protocol: ptr(proto)})
	}
	for _, e := range eps {
		var ep discoveryv1.Endpoint
		e, cond, _ := strings.Cut(e, "!")
		ip, node, ok := strings.Cut(e, "@")
		if ok {
			ep.NodeName = ptr(node)
		}
		if netip.MustParseAddr(ip).Is6() {
			sl.AddressType = discoveryv1.AddressTypeIPv6
		}
		ep.Addresses = []string{ip}
		switch cond {
		case "r":
			ep.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(false), Terminating: ptr(false)}
		case "t":
			ep.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}
		case "x":
			ep.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(false), Terminating: ptr(true)}
		default:
			ep.Conditions = discoveryv1.EndpointConditions{Ready: ptr(true)}
		}
		sl.Endpoints = append(sl.Endpoints, ep)
	}
	return sl
}

func ptr[T any](v T) *T { return &v }

var udp = corev1.ProtocolUDP

// node is the test's node: node1 at 192.0.2.10 and 2001:db8::10.
var node = svcmanager.Node{Name: "node1", Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")}}

// remote returns backends of a remote cluster (its name for the reader;
// the id is what counts): "ip:port" each, port name http.
func remote(_ string, id uint32, addrs ...string) []svcmanager.Backend {
	var out []svcmanager.Backend
	for _, a := range addrs {
		ap := netip.MustParseAddrPort(a)
		out = append(out, svcmanager.Backend{Addr: datapath.L3n4Addr{Addr: ap.Addr(), Port: ap.Port(), Proto: datapath.ProtoTCP},
			PortNames: []string{"http"}, ClusterID: id})
	}
	return out
}

func renderGet(w *fakeWriter, fe datapath.L3n4Addr) string {
	s, _ := w.Get(fe)
	return render(s)
}
