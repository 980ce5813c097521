package svcmanager_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// hinted returns slice's endpoints with zone hints: zones[i] is endpoint
// i's ("" none, "a,b" two).
func hinted(sl *discoveryv1.EndpointSlice, zones ...string) *discoveryv1.EndpointSlice {
	for i, z := range zones {
		if z == "" {
			continue
		}
		h := &discoveryv1.EndpointHints{}
		for _, name := range strings.Split(z, ",") {
			h.ForZones = append(h.ForZones, discoveryv1.ForZone{Name: name})
		}
		sl.Endpoints[i].Hints = h
	}
	return sl
}

// nodeHinted adds node hints to slice's endpoints: nodes[i] is endpoint
// i's ("" none).
func nodeHinted(sl *discoveryv1.EndpointSlice, nodes ...string) *discoveryv1.EndpointSlice {
	for i, n := range nodes {
		if n == "" {
			continue
		}
		if sl.Endpoints[i].Hints == nil {
			sl.Endpoints[i].Hints = &discoveryv1.EndpointHints{}
		}
		sl.Endpoints[i].Hints.ForNodes = append(sl.Endpoints[i].Hints.ForNodes, discoveryv1.ForNode{Name: n})
	}
	return sl
}

// TestDesiredTopology: topology-aware routing, kube-proxy's rule. When
// every ready endpoint has node hints and one is hinted for this node,
// the frontends of Cluster policy take only those; else when every one
// has zone hints and one is hinted for this node's zone, only those;
// otherwise (no zone for the node, no endpoint for it or its zone, a
// ready endpoint without hints) all of them. Local frontends are not
// filtered; a two-scope frontend's internal entry is.
func TestDesiredTopology(t *testing.T) {
	http := map[string]int32{"http": 8080}
	svc := func(mutate func(*corev1.Service)) *corev1.Service {
		s := k8sService("web", []string{"10.96.0.10"}, "http:80:8080:30080")
		s.Spec.Type = corev1.ServiceTypeNodePort
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	tests := []struct {
		name  string
		svc   *corev1.Service
		slice *discoveryv1.EndpointSlice
		zone  string
		want  []string
	}{{
		name:  "the zone's endpoints only",
		svc:   svc(nil),
		slice: hinted(slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2", "10.0.1.3@node3", "10.0.1.4@node2!r"), "a", "b", "a,b", ""),
		zone:  "a",
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.3:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.3:8080/TCP(active)",
		},
	}, {
		name: "node hints (PreferSameNode) before zone hints: this node's endpoint only",
		svc:  svc(nil),
		slice: nodeHinted(hinted(slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2", "10.0.1.3@node3"), "a", "a", "b"),
			"node1", "node2", "node3"),
		zone: "a",
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)",
		},
	}, {
		name:  "no endpoint hinted for this node: the zone's",
		svc:   svc(nil),
		slice: nodeHinted(hinted(slice("web-a", http, "10.0.1.2@node2", "10.0.1.3@node3"), "a", "b"), "node2", "node3"),
		zone:  "a",
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.2:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.2:8080/TCP(active)",
		},
	}, {
		name:  "node hints without a zone for the node",
		svc:   svc(nil),
		slice: nodeHinted(slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2"), "node1", "node2"),
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)",
		},
	}, {
		name:  "no endpoint for the node's zone: all",
		svc:   svc(nil),
		slice: hinted(slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2"), "a", "b"),
		zone:  "c",
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
		},
	}, {
		name:  "a ready endpoint without hints: all",
		svc:   svc(nil),
		slice: hinted(slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2"), "a", ""),
		zone:  "a",
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
		},
	}, {
		name:  "the node's zone unknown: all",
		svc:   svc(nil),
		slice: hinted(slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2"), "a", "b"),
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
		},
	}, {
		name: "externalTrafficPolicy Local: the NodePort keeps the node's endpoints, its internal scope the zone's",
		svc: svc(func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}),
		slice: hinted(slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2", "10.0.1.3@node3"), "b", "a", "b"),
		zone:  "a",
		want: []string{
			"0.0.0.0:30080/TCP NodePort local twoscopes -> 10.0.1.1:8080/TCP(active)",
			"0.0.0.0:30080/TCP/i NodePort -> 10.0.1.2:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.2:8080/TCP(active)",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := svcmanager.FromKubernetes(tt.svc, []*discoveryv1.EndpointSlice{tt.slice})
			got := renderAll(svcmanager.Desired(s, nil, svcmanager.Node{Name: "node1", Zone: tt.zone}))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Desired =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}

	// The manager follows the node's zone.
	w := newFakeWriter()
	m := svcmanager.New(w, svcmanager.Node{Name: "node1"}, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(k8sService("web", []string{"10.96.0.10"}, "http:80:8080"),
		[]*discoveryv1.EndpointSlice{hinted(slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2"), "a", "b")}))
	m.SetNode(svcmanager.Node{Name: "node1", Zone: "b"})
	if got := w.Dump(); !slices.Equal(got, []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.2:8080/TCP(active)"}) {
		t.Errorf("after the node's zone became b: %v", got)
	}
	m.SetNode(svcmanager.Node{Name: "node1"})
	if got := w.Dump(); !slices.Equal(got, []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)"}) {
		t.Errorf("after the node's zone was cleared: %v", got)
	}
}
