package svcmanager_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath/svcmanager"
)

func TestDesired(t *testing.T) {
	web := func(mod func(*corev1.Service), ips []string, ports ...string) *corev1.Service {
		s := k8sService("web", ips, ports...)
		if mod != nil {
			mod(s)
		}
		return s
	}
	http := map[string]int32{"http": 8080}
	tests := []struct {
		name   string
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		remote []svcmanager.Backend
		want   []string
	}{{
		name: "dual stack ClusterIP, named target port numbered differently per slice",
		svc:  web(nil, []string{"10.96.0.10", "fd00::10"}, "http:80:web"),
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2"),
			slice("web-b", map[string]int32{"http": 9090}, "10.0.2.1@node2"),
			slice("web-c", map[string]int32{"http": 8443}, "fd00:1::1@node1"),
		},
		want: []string{
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active) 10.0.2.1:9090/TCP(active)",
			"[fd00::10]:80/TCP ClusterIP -> [fd00:1::1]:8443/TCP(active)",
		},
	}, {
		name: "two ports, matched by name, one UDP",
		svc:  web(nil, []string{"10.96.0.10"}, "http:80:8080", "dns:53:5353/UDP"),
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", map[string]int32{"http": 8080, "dns/UDP": 5353}, "10.0.1.1"),
		},
		want: []string{
			"10.96.0.10:53/UDP ClusterIP -> 10.0.1.1:5353/UDP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)",
		},
	}, {
		name: "single unnamed port",
		svc:  web(nil, []string{"10.96.0.10"}, ":80:8080"),
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", map[string]int32{"": 8080}, "10.0.1.1"),
		},
		want: []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)"},
	}, {
		name: "NodePort on the unspecified address and each node address, dual stack",
		svc: web(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
		}, []string{"10.96.0.10", "fd00::10"}, "http:80:8080:30080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1"), slice("web-b", http, "fd00:1::1")},
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)",
			"192.0.2.10:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
			"[::]:30080/TCP NodePort -> [fd00:1::1]:8080/TCP(active)",
			"[2001:db8::10]:30080/TCP NodePort -> [fd00:1::1]:8080/TCP(active)",
			"[fd00::10]:80/TCP ClusterIP -> [fd00:1::1]:8080/TCP(active)",
		},
	}, {
		name: "LoadBalancer: ingress VIPs (not proxy mode), external IPs, externalTrafficPolicy Local: each external frontend has the node's backends, and an internal scope with all",
		svc: web(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.ExternalIPs = []string{"198.51.100.7"}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.5"},
				{IP: "203.0.113.6", IPMode: ptr(corev1.LoadBalancerIPModeProxy)}, {Hostname: "lb.example"}}
		}, []string{"10.96.0.10"}, "http:80:8080:30080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2")},
		want: []string{
			"0.0.0.0:30080/TCP NodePort local twoscopes -> 10.0.1.1:8080/TCP(active)",
			"0.0.0.0:30080/TCP/i NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
			"192.0.2.10:30080/TCP NodePort local twoscopes -> 10.0.1.1:8080/TCP(active)",
			"192.0.2.10:30080/TCP/i NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
			"198.51.100.7:80/TCP ExternalIPs local twoscopes -> 10.0.1.1:8080/TCP(active)",
			"198.51.100.7:80/TCP/i ExternalIPs -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
			"203.0.113.5:80/TCP LoadBalancer local twoscopes -> 10.0.1.1:8080/TCP(active)",
			"203.0.113.5:80/TCP/i LoadBalancer -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)",
		},
	}, {
		name: "loadBalancerSourceRanges: the LoadBalancer frontend only, not its ClusterIP, NodePort or external IP",
		svc: web(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ExternalIPs = []string{"198.51.100.7"}
			s.Spec.LoadBalancerSourceRanges = []string{"192.168.1.7/16", "10.0.0.0/8", "192.168.0.0/16"}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.5"}}
		}, []string{"10.96.0.10"}, "http:80:8080:30080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)",
			"192.0.2.10:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
			"198.51.100.7:80/TCP ExternalIPs -> 10.0.1.1:8080/TCP(active)",
			"203.0.113.5:80/TCP LoadBalancer sourceRanges=10.0.0.0/8,192.168.0.0/16 -> 10.0.1.1:8080/TCP(active)",
		},
	}, {
		name: "loadBalancerSourceRanges of IPv4 only, dual stack: the IPv6 LoadBalancer frontend is closed (::/128)",
		svc: web(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
			s.Annotations[svcmanager.AnnotationLoadBalancerSourceRanges] = "10.0.0.0/8"
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.5"}, {IP: "2001:db8:1::5"}}
		}, []string{"10.96.0.10", "fd00::10"}, "http:80:8080:30080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1"), slice("web-b", http, "fd00:1::1")},
		want: []string{
			"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)",
			"192.0.2.10:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
			"203.0.113.5:80/TCP LoadBalancer sourceRanges=10.0.0.0/8 -> 10.0.1.1:8080/TCP(active)",
			"[::]:30080/TCP NodePort -> [fd00:1::1]:8080/TCP(active)",
			"[2001:db8::10]:30080/TCP NodePort -> [fd00:1::1]:8080/TCP(active)",
			"[2001:db8:1::5]:80/TCP LoadBalancer sourceRanges=::/128 -> [fd00:1::1]:8080/TCP(active)",
			"[fd00::10]:80/TCP ClusterIP -> [fd00:1::1]:8080/TCP(active)",
		},
	}, {
		name: "a bad loadBalancerSourceRanges entry: every LoadBalancer frontend closed, the others open",
		svc: web(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8", "10.0.0/8", "fd00::/64"}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.5"}, {IP: "2001:db8:1::5"}}
		}, []string{"10.96.0.10", "fd00::10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1"), slice("web-b", http, "fd00:1::1")},
		want: []string{
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)",
			"203.0.113.5:80/TCP LoadBalancer sourceRanges=0.0.0.0/32 -> 10.0.1.1:8080/TCP(active)",
			"[2001:db8:1::5]:80/TCP LoadBalancer sourceRanges=::/128 -> [fd00:1::1]:8080/TCP(active)",
			"[fd00::10]:80/TCP ClusterIP -> [fd00:1::1]:8080/TCP(active)",
		},
	}, {
		name: "internalTrafficPolicy Local: the ClusterIP and the NodePort's internal scope, no local backend leaves them empty",
		svc: web(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
		}, []string{"10.96.0.10"}, "http:80:8080:30080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.2@node2")},
		want: []string{
			"0.0.0.0:30080/TCP NodePort twoscopes -> 10.0.1.2:8080/TCP(active)",
			"0.0.0.0:30080/TCP/i NodePort local ->",
			"10.96.0.10:80/TCP ClusterIP local ->",
			"192.0.2.10:30080/TCP NodePort twoscopes -> 10.0.1.2:8080/TCP(active)",
			"192.0.2.10:30080/TCP/i NodePort local ->",
		},
	}, {
		name: "both traffic policies Local: one scope, the node's backends",
		svc: web(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
		}, []string{"10.96.0.10"}, "http:80:8080:30080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2")},
		want: []string{
			"0.0.0.0:30080/TCP NodePort local -> 10.0.1.1:8080/TCP(active)",
			"10.96.0.10:80/TCP ClusterIP local -> 10.0.1.1:8080/TCP(active)",
			"192.0.2.10:30080/TCP NodePort local -> 10.0.1.1:8080/TCP(active)",
		},
	}, {
		name:   "headless: no frontends",
		svc:    web(nil, []string{"None"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
	}, {
		name: "headless label: no frontends even with a ClusterIP",
		svc: web(func(s *corev1.Service) {
			s.Labels = map[string]string{corev1.IsHeadlessService: ""}
		}, []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
	}, {
		name: "the headless annotation is not the label: frontends",
		svc: web(func(s *corev1.Service) {
			s.Annotations[corev1.IsHeadlessService] = ""
		}, []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)"},
	}, {
		name: "session affinity ClientIP: the default timeout and a given one",
		svc: web(func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		}, []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
		want:   []string{"10.96.0.10:80/TCP ClusterIP affinity=3h0m0s -> 10.0.1.1:8080/TCP(active)"},
	}, {
		name: "session affinity with a timeout",
		svc: web(func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(60))}}
		}, []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
		want:   []string{"10.96.0.10:80/TCP ClusterIP affinity=1m0s -> 10.0.1.1:8080/TCP(active)"},
	}, {
		name:   "terminating endpoints kept beside ready ones; not ready ones left out",
		svc:    web(nil, []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1", "10.0.1.2!t", "10.0.1.3!x", "10.0.1.4!r")},
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating) 10.0.1.3:8080/TCP(terminating)"},
	}, {
		name:   "no ready endpoint: the serving terminating ones take new connections",
		svc:    web(nil, []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.2!t", "10.0.1.3!x", "10.0.1.4!r")},
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.2:8080/TCP(active) 10.0.1.3:8080/TCP(terminating)"},
	}, {
		name:   "remote backends ignored for a service that is not global",
		svc:    web(nil, []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
		remote: remote("c2", 2, "10.2.0.1:8080"),
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)"},
	}, {
		name:   "global, affinity none: every cluster",
		svc:    web(global(""), []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
		remote: slices.Concat(remote("c3", 3, "10.3.0.1:8080"), remote("c2", 2, "10.2.0.1:8080", "10.2.0.2:8080")),
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.2.0.1:8080/TCP(active,c2) 10.2.0.2:8080/TCP(active,c2) 10.3.0.1:8080/TCP(active,c3)"},
	}, {
		name:   "global, old annotation, affinity local with a ready local backend: local only",
		svc:    web(globalOld("local"), []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1", "10.0.1.2!t")},
		remote: remote("c2", 2, "10.2.0.1:8080"),
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating)"},
	}, {
		name:   "global, affinity local, no ready local backend: fails over to the remote ones",
		svc:    web(global("local"), []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.2!t", "10.0.1.4!r")},
		remote: slices.Concat(remote("c2", 2, "10.2.0.1:8080"), remote("c3", 3, "10.3.0.1:8080")),
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.2:8080/TCP(terminating) 10.2.0.1:8080/TCP(active,c2) 10.3.0.1:8080/TCP(active,c3)"},
	}, {
		name:   "global, affinity remote: remote only while one is healthy",
		svc:    web(global("Remote"), []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
		remote: remote("c2", 2, "10.2.0.1:8080"),
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.2.0.1:8080/TCP(active,c2)"},
	}, {
		name:   "global, affinity remote, no remote backend: local",
		svc:    web(global("remote"), []string{"10.96.0.10"}, "http:80:8080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1")},
		want:   []string{"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)"},
	}, {
		name: "global, externalTrafficPolicy Local: NodePort keeps the node's backends, no remote ones; its internal scope has all",
		svc: web(func(s *corev1.Service) {
			global("")(s)
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}, []string{"10.96.0.10"}, "http:80:8080:30080"),
		slices: []*discoveryv1.EndpointSlice{slice("web-a", http, "10.0.1.1@node1", "10.0.1.2@node2")},
		remote: remote("c2", 2, "10.2.0.1:8080"),
		want: []string{
			"0.0.0.0:30080/TCP NodePort local twoscopes -> 10.0.1.1:8080/TCP(active)",
			"0.0.0.0:30080/TCP/i NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active) 10.2.0.1:8080/TCP(active,c2)",
			"10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active) 10.2.0.1:8080/TCP(active,c2)",
			"192.0.2.10:30080/TCP NodePort local twoscopes -> 10.0.1.1:8080/TCP(active)",
			"192.0.2.10:30080/TCP/i NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active) 10.2.0.1:8080/TCP(active,c2)",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := svcmanager.FromKubernetes(tt.svc, tt.slices)
			got := renderAll(svcmanager.Desired(svc, tt.remote, node))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Desired =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func global(affinity string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Annotations[svcmanager.AnnotationGlobal] = "true"
		if affinity != "" {
			s.Annotations[svcmanager.AnnotationAffinity] = affinity
		}
	}
}

func globalOld(affinity string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Annotations[svcmanager.AnnotationGlobalOld] = "true"
		s.Annotations[svcmanager.AnnotationAffinityOld] = affinity
	}
}

func TestFromKubernetes(t *testing.T) {
	t.Run("ExternalName is not balanced", func(t *testing.T) {
		svc := k8sService("web", nil, "http:80:8080")
		svc.Spec.Type = corev1.ServiceTypeExternalName
		if s := svcmanager.FromKubernetes(svc, nil); s != nil {
			t.Errorf("FromKubernetes(ExternalName) = %+v, want nil", s)
		}
	})
	t.Run("annotations and warnings", func(t *testing.T) {
		svc := k8sService("web", []string{"10.96.0.10", "10.96.0.300"}, "http:80:8080")
		svc.Spec.ExternalIPs = []string{"::"}
		global("nearest")(svc)
		svc.Annotations[svcmanager.AnnotationShared] = "false"
		sl := slice("web-a", map[string]int32{"http": 8080}, "10.0.1.1")
		sl.Endpoints[0].Addresses = append(sl.Endpoints[0].Addresses, "bogus", "0.0.0.0")
		s := svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl})
		if !s.Global || s.Shared || s.Affinity != svcmanager.AffinityNone {
			t.Errorf("global %v shared %v affinity %q, want true false none", s.Global, s.Shared, s.Affinity)
		}
		want := []string{
			`annotation service.cilium.io/affinity: "nearest" is not local, remote or none; using none`,
			`spec.clusterIPs[1]: "10.96.0.300" is not an IP address`,
			`spec.externalIPs[0]: "::" is the unspecified address`,
			`EndpointSlice web-a: endpoints[0].addresses[1]: "bogus" is not an IP address`,
			`EndpointSlice web-a: endpoints[0].addresses[2]: "0.0.0.0" is the unspecified address`,
		}
		if !slices.Equal(s.Warnings, want) {
			t.Errorf("Warnings =\n  %s\nwant\n  %s", strings.Join(s.Warnings, "\n  "), strings.Join(want, "\n  "))
		}
		if len(s.Frontends) != 1 || len(s.Backends) != 1 {
			t.Errorf("frontends %v backends %v, want one each", s.Frontends, s.Backends)
		}
	})
}
