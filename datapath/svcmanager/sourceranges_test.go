package svcmanager_test

import (
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// closed is the warning's tail: what a bad entry does.
const closed = "is not a CIDR: the service's LoadBalancer frontends accept no client from outside until it is fixed"

// lbService returns a LoadBalancer Service web (10.96.0.10, port http
// 80, NodePort 30080, ingress 203.0.113.5) with the given source ranges
// (nil: none) and annotation ("": none).
func lbService(ranges []string, annotation string) *corev1.Service {
	s := k8sService("web", []string{"10.96.0.10"}, "http:80:8080:30080")
	s.Spec.Type = corev1.ServiceTypeLoadBalancer
	s.Spec.LoadBalancerSourceRanges = ranges
	if annotation != "" {
		s.Annotations[svcmanager.AnnotationLoadBalancerSourceRanges] = annotation
	}
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.5"}}
	return s
}

// TestSourceRanges: a LoadBalancer Service's ranges come from
// spec.loadBalancerSourceRanges, else from the annotation, parsed as
// Kubernetes validates them (padding, leading zeros, host bits), masked,
// sorted, deduplicated; another type has none; an entry that does not
// parse is named in a warning and closes the Service (both deny ranges),
// whatever the other entries.
func TestSourceRanges(t *testing.T) {
	tests := []struct {
		name         string
		give         *corev1.Service
		want         []string
		wantWarnings []string
	}{{
		name: "spec field: masked, sorted (IPv4 first, shorter first), deduplicated, both families",
		give: lbService([]string{"192.168.1.7/16", "fd00::1/64", " 10.0.0.0/8", "192.168.0.0/16", "10.1.2.3/16"}, ""),
		want: []string{"10.0.0.0/8", "10.1.0.0/16", "192.168.0.0/16", "fd00::/64"},
	}, {
		name: "Kubernetes' sloppy forms: leading zeros in the address and the length, IPv4-mapped",
		give: lbService([]string{"010.001.0.0/016", "::ffff:172.16.0.1/108"}, ""),
		want: []string{"10.1.0.0/16", "172.16.0.0/12"},
	}, {
		name: "open to all, as written",
		give: lbService([]string{"0.0.0.0/0"}, ""),
		want: []string{"0.0.0.0/0"},
	}, {
		name: "annotation when the field is empty, spaces trimmed",
		give: lbService(nil, " 172.16.0.0/12 , 10.0.0.0/8"),
		want: []string{"10.0.0.0/8", "172.16.0.0/12"},
	}, {
		name: "the field wins over the annotation",
		give: lbService([]string{"10.0.0.0/8"}, "172.16.0.0/12"),
		want: []string{"10.0.0.0/8"},
	}, {
		name: "an empty annotation is none",
		give: lbService(nil, "  "),
	}, {
		name: "ClusterIP Service: the field ignored, no warning",
		give: func() *corev1.Service {
			s := lbService([]string{"10.0.0.0/8", "bogus"}, "")
			s.Spec.Type = corev1.ServiceTypeClusterIP
			return s
		}(),
	}, {
		name: "NodePort Service: the annotation ignored",
		give: func() *corev1.Service {
			s := lbService(nil, "10.0.0.0/8")
			s.Spec.Type = corev1.ServiceTypeNodePort
			return s
		}(),
	}, {
		name:         "a bad entry closes the Service, not only its own range",
		give:         lbService([]string{"10.0.0.0/8", "10.0.0/8", "fd00::/64"}, ""),
		want:         []string{"0.0.0.0/32", "::/128"},
		wantWarnings: []string{`spec.loadBalancerSourceRanges[1]: "10.0.0/8" ` + closed},
	}, {
		name: "each bad entry named: no length, too long, a zone, a host name",
		give: lbService([]string{"10.0.0.1", "10.0.0.0/33", "fe80::1%eth0/64", "example.com/8"}, ""),
		want: []string{"0.0.0.0/32", "::/128"},
		wantWarnings: []string{
			`spec.loadBalancerSourceRanges[0]: "10.0.0.1" ` + closed,
			`spec.loadBalancerSourceRanges[1]: "10.0.0.0/33" ` + closed,
			`spec.loadBalancerSourceRanges[2]: "fe80::1%eth0/64" ` + closed,
			`spec.loadBalancerSourceRanges[3]: "example.com/8" ` + closed,
		},
	}, {
		name:         "a bad annotation entry (a trailing comma) names the annotation",
		give:         lbService(nil, "10.0.0.0/8,"),
		want:         []string{"0.0.0.0/32", "::/128"},
		wantWarnings: []string{`annotation service.beta.kubernetes.io/load-balancer-source-ranges[1]: "" ` + closed},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := svcmanager.FromKubernetes(tt.give, nil)
			var got []string
			for _, p := range s.SourceRanges {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("SourceRanges = %q, want %q", got, tt.want)
			}
			if !slices.Equal(s.Warnings, tt.wantWarnings) {
				t.Errorf("Warnings =\n  %s\nwant\n  %s", strings.Join(s.Warnings, "\n  "), strings.Join(tt.wantWarnings, "\n  "))
			}
		})
	}
}

// TestDesiredSourceRanges: a Service built by hand, its ranges not
// sorted by family, still gives each LoadBalancer frontend its own
// family's ranges only.
func TestDesiredSourceRanges(t *testing.T) {
	s := svcmanager.FromKubernetes(lbService(nil, ""), nil)
	s.Frontends = append(s.Frontends, svcmanager.Frontend{Addr: s.Frontends[len(s.Frontends)-1].Addr, Type: s.Frontends[len(s.Frontends)-1].Type})
	s.Frontends[len(s.Frontends)-1].Addr.Addr = netip.MustParseAddr("2001:db8::5")
	s.SourceRanges = []netip.Prefix{netip.MustParsePrefix("fd00::/64"), netip.MustParsePrefix("10.0.0.0/8")}
	var got []string
	for _, lb := range svcmanager.Desired(s, nil, node) {
		got = append(got, fmt.Sprintf("%s %v", lb.Frontend, lb.SourceRanges))
	}
	want := []string{
		"0.0.0.0:30080/TCP []", "10.96.0.10:80/TCP []", "192.0.2.10:30080/TCP []",
		"203.0.113.5:80/TCP [10.0.0.0/8]", "[2001:db8::5]:80/TCP [fd00::/64]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Desired =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestSourceRangeCheckOff: with the check off (Cilium's
// --enable-svc-source-range-check=false) the LoadBalancer frontends are
// written without their ranges, and written again with them once it is
// back on; a service without ranges is not rewritten.
func TestSourceRangeCheckOff(t *testing.T) {
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	m.SetSourceRangeCheck(false)
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(lbService([]string{"10.0.0.0/8"}, ""), nil))
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(k8sService("plain", []string{"10.96.0.11"}, "http:80:8080"), nil))
	w.Take()
	lb := netip.MustParseAddrPort("203.0.113.5:80")
	fe := datapath.L3n4Addr{Addr: lb.Addr(), Port: lb.Port(), Proto: datapath.ProtoTCP}
	if got, ok := w.Get(fe); !ok || len(got.SourceRanges) != 0 {
		t.Fatalf("check off: %v %v, want the frontend without ranges", got.SourceRanges, ok)
	}
	m.SetSourceRangeCheck(true)
	if got, _ := w.Get(fe); !slices.Equal(got.SourceRanges, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}) {
		t.Errorf("check on again: %v", got.SourceRanges)
	}
	for _, c := range w.Take() {
		if strings.Contains(c, "10.96.0.11") {
			t.Errorf("the service without ranges written again: %s", c)
		}
	}
}
