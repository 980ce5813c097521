package k8ssvc_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/clustermesh/service/k8ssvc"
)

func k8sService(name string, annotations map[string]string, clusterIPs ...string) *corev1.Service {
	var clusterIP string
	if len(clusterIPs) > 0 {
		clusterIP = clusterIPs[0]
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: annotations, Labels: map[string]string{"app": name}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name}, ClusterIP: clusterIP, ClusterIPs: clusterIPs,
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}, {Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// endpoint is an endpoint of a slice; ready nil leaves the condition
// unset (which counts as ready).
func endpoint(ready *bool, addrs ...string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

func slice(svc, name string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports: []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr[int32](8080)},
			{Name: ptr("dns"), Protocol: ptr(corev1.ProtocolUDP), Port: ptr[int32](5353)}},
	}
}

// render is "frontends | backends", each "<ip>:<port>/<proto>(<name>)"
// sorted.
func render(m map[string]service.PortConfiguration) string {
	var out []string
	for ip, pc := range m {
		for name, p := range pc {
			out = append(out, ip+":"+strconv.Itoa(int(p.Port))+"/"+p.Protocol+"("+name+")")
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func TestGlobalAndShared(t *testing.T) {
	tests := []struct {
		name           string
		annotations    map[string]string
		global, shared bool
	}{
		{"none", nil, false, false},
		{"global", map[string]string{k8ssvc.AnnotationGlobal: "true"}, true, true},
		{"global, any case", map[string]string{k8ssvc.AnnotationGlobal: "True"}, true, true},
		{"old global annotation", map[string]string{k8ssvc.AnnotationGlobalOld: "true"}, true, true},
		{"global false", map[string]string{k8ssvc.AnnotationGlobal: "false"}, false, false},
		{"not shared", map[string]string{k8ssvc.AnnotationGlobal: "true", k8ssvc.AnnotationShared: "false"}, true, false},
		{"old not shared", map[string]string{k8ssvc.AnnotationGlobal: "true", k8ssvc.AnnotationSharedOld: "false"}, true, false},
		{"shared other value", map[string]string{k8ssvc.AnnotationGlobal: "true", k8ssvc.AnnotationShared: "no"}, true, false},
		{"shared without global", map[string]string{k8ssvc.AnnotationShared: "true"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := k8sService("web", tt.annotations)
			if got := k8ssvc.IsGlobal(svc); got != tt.global {
				t.Errorf("IsGlobal = %v, want %v", got, tt.global)
			}
			if got := k8ssvc.IsShared(svc); got != tt.shared {
				t.Errorf("IsShared = %v, want %v", got, tt.shared)
			}
		})
	}
}

func TestConvert(t *testing.T) {
	svc := k8sService("web", map[string]string{k8ssvc.AnnotationGlobal: "true"}, "10.96.0.10", "fd00:96::a")
	sls := []*discoveryv1.EndpointSlice{
		slice("web", "web-1", endpoint(nil, "10.1.0.1"), endpoint(ptr(true), "10.1.0.2"), endpoint(ptr(false), "10.1.0.3")),
		slice("web", "web-2", endpoint(ptr(true), "10.1.0.4", "bogus")),
	}
	cs := k8ssvc.Convert(svc, sls, cluster.Info{ClusterName: "c1", ClusterID: 1})
	if cs.Cluster != "c1" || cs.ClusterID != 1 || cs.Namespace != "default" || cs.Name != "web" ||
		!cs.IncludeExternal || !cs.Shared || cs.Labels["app"] != "web" || cs.Selector["app"] != "web" {
		t.Errorf("got %+v", cs)
	}
	if got, want := render(cs.Frontends), "10.96.0.10:53/UDP(dns) 10.96.0.10:80/TCP(http) fd00:96::a:53/UDP(dns) fd00:96::a:80/TCP(http)"; got != want {
		t.Errorf("frontends %q, want %q", got, want)
	}
	want := "10.1.0.1:5353/UDP(dns) 10.1.0.1:8080/TCP(http) 10.1.0.2:5353/UDP(dns) 10.1.0.2:8080/TCP(http) " +
		"10.1.0.4:5353/UDP(dns) 10.1.0.4:8080/TCP(http)"
	if got := render(cs.Backends); got != want {
		t.Errorf("backends %q, want %q", got, want)
	}
	// What the remote clusters decode.
	data, err := cs.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := service.Decode("default/web", data)
	if err != nil {
		t.Fatalf("Decode of the published value: %v", err)
	}
	if render(back.Backends) != want {
		t.Errorf("decoded backends %q", render(back.Backends))
	}

	headless := k8sService("db", nil, "None")
	if cs := k8ssvc.Convert(headless, nil, cluster.Info{ClusterName: "c1"}); len(cs.Frontends) != 0 || len(cs.Backends) != 0 {
		t.Errorf("headless without slices: %+v", cs)
	}
}
