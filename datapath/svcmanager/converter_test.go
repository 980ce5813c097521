package svcmanager_test

import (
	"log/slog"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// TestConverter: the converter returns what FromKubernetes returns; an
// object seen before (same object, resourceVersion set) is not parsed
// again, a new version is; objects without a resourceVersion are parsed
// every time; joining two slices never writes into a kept one; the
// slices of the last call are kept, the others dropped; Forget drops
// what was kept of a Service.
func TestConverter(t *testing.T) {
	c := svcmanager.NewConverter()
	svc := k8sService("web", []string{"10.96.0.10"}, "http:80:http")
	svc.ResourceVersion = "7"
	a := slice("web-a", map[string]int32{"http": 8080}, "10.0.1.1", "10.0.1.2!r", "10.0.1.3@node2")
	a.ResourceVersion = "8"
	b := slice("web-b", map[string]int32{"http": 8080}, "10.0.2.1", "10.0.2.2")
	b.Endpoints[1].Addresses[0] = "not-an-ip"
	b.ResourceVersion = "9"
	check := func(what string, got *svcmanager.Service, eps ...*discoveryv1.EndpointSlice) {
		t.Helper()
		if want := svcmanager.FromKubernetes(svc, eps); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Convert = %+v, want %+v", what, got, want)
		}
	}
	one := c.Convert(svc, []*discoveryv1.EndpointSlice{a})
	check("one slice", one, a)
	again := c.Convert(svc, []*discoveryv1.EndpointSlice{a})
	check("the same slice again", again, a)
	if &again.Backends[0] != &one.Backends[0] || &again.Frontends[0] != &one.Frontends[0] {
		t.Error("the same objects were parsed again")
	}
	both := c.Convert(svc, []*discoveryv1.EndpointSlice{a, b})
	check("two slices, one with a bad address", both, a, b)
	if len(both.Warnings) != 1 {
		t.Errorf("warnings = %q, want one for b's address", both.Warnings)
	}
	_ = append(both.Backends, svcmanager.Backend{})
	check("the first slice after a join", c.Convert(svc, []*discoveryv1.EndpointSlice{a}), a)

	a2 := slice("web-a", map[string]int32{"http": 8080}, "10.0.1.1", "10.0.1.4")
	a2.ResourceVersion = "10"
	changed := c.Convert(svc, []*discoveryv1.EndpointSlice{a2, b})
	check("a new version of a", changed, a2, b)

	svc2 := k8sService("web", []string{"10.96.0.10"}, "http:80:http", "dns:53:dns/UDP")
	svc2.ResourceVersion = "11"
	if got, want := c.Convert(svc2, []*discoveryv1.EndpointSlice{a2}), svcmanager.FromKubernetes(svc2, []*discoveryv1.EndpointSlice{a2}); !reflect.DeepEqual(got, want) {
		t.Errorf("a new version of the Service: Convert = %+v, want %+v", got, want)
	}

	plain := slice("web-c", map[string]int32{"http": 8080}, "10.0.3.1")
	p1 := c.Convert(svc2, []*discoveryv1.EndpointSlice{plain})
	p2 := c.Convert(svc2, []*discoveryv1.EndpointSlice{plain})
	if &p1.Backends[0] == &p2.Backends[0] {
		t.Error("a slice without resourceVersion was kept")
	}
	if s, sl := c.Len(); s != 1 || sl != 0 {
		t.Errorf("kept %d services, %d slices; want 1, 0 (web; web-c has no resourceVersion)", s, sl)
	}
	c.Convert(svc2, []*discoveryv1.EndpointSlice{a2, b})
	if s, sl := c.Len(); s != 1 || sl != 2 {
		t.Errorf("kept %d services, %d slices; want 1, 2 (web; web-a, web-b)", s, sl)
	}
	check2 := func(what string, eps ...*discoveryv1.EndpointSlice) {
		t.Helper()
		if got, want := c.Convert(svc2, eps), svcmanager.FromKubernetes(svc2, eps); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Convert = %+v, want %+v", what, got, want)
		}
	}
	check2("web-b gone", a2)
	if _, sl := c.Len(); sl != 1 {
		t.Errorf("kept %d slices after web-b went, want 1", sl)
	}
	check2("web-b back", b, a2)
	check2("web-a gone", b)
	if _, sl := c.Len(); sl != 1 {
		t.Errorf("kept %d slices after web-a went, want 1", sl)
	}
	check2("none")
	if _, sl := c.Len(); sl != 0 {
		t.Errorf("kept %d slices with none given, want 0", sl)
	}
	c.ForgetService("default", "web")
	if s, sl := c.Len(); s != 0 || sl != 0 {
		t.Errorf("after Forget: kept %d services, %d slices", s, sl)
	}
	ext := k8sService("ext", nil)
	ext.Spec.Type = "ExternalName"
	ext.ResourceVersion = "12"
	if c.Convert(ext, nil) != nil || c.Convert(ext, nil) != nil {
		t.Error("an ExternalName service was converted")
	}
}

// TestConverterSourceRanges: a new version of a Service object with
// other source ranges gives Services with its own ranges, and the
// writer is handed them (a change of the ranges alone is a write),
// while a Service of the version before that someone still holds (the
// state file's entry here) keeps the old ones; a slice change of a
// Service with ranges allocates nothing (the frontends share the
// Service's ranges).
func TestConverterSourceRanges(t *testing.T) {
	conv := svcmanager.NewConverter()
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	vs := versions(4)
	lb := datapath.L3n4Addr{Addr: netip.MustParseAddr("203.0.113.5"), Port: 80, Proto: datapath.ProtoTCP}
	obj := func(rv string, ranges ...string) *corev1.Service {
		s := lbService(ranges, "")
		s.ResourceVersion = rv
		return s
	}
	v1 := obj("1", "10.0.0.0/8")
	first := conv.Convert(v1, []*discoveryv1.EndpointSlice{vs[0]})
	m.Upsert(svcmanager.SourceKubernetes, first)
	m.Upsert(svcmanager.SourceFile, first)
	held := keep(first)

	for i, tc := range []struct {
		obj  *corev1.Service
		want string
	}{
		{obj("2", "192.168.0.0/16", "fd00::/64"), " sourceRanges=192.168.0.0/16 "},
		{obj("3"), ""}, // none: open again
		{obj("4", "10.0.0.0/8", "bogus"), " sourceRanges=0.0.0.0/32 "},
		{obj("5", "172.16.0.0/12"), " sourceRanges=172.16.0.0/12 "},
	} {
		// The first slice is the last one of the version before: only
		// the ranges change.
		for j, sl := range []*discoveryv1.EndpointSlice{vs[3], vs[1], vs[2], vs[3]} {
			eps := []*discoveryv1.EndpointSlice{sl}
			s := conv.Convert(tc.obj, eps)
			if want := svcmanager.FromKubernetes(tc.obj, eps); !sameService(s, want) {
				t.Fatalf("version %d, slice %d: Convert = %+v, want %+v", i+2, j, s, want)
			}
			m.Upsert(svcmanager.SourceKubernetes, s)
			if got := renderGet(w, lb); !strings.Contains(got, tc.want) || tc.want == "" && strings.Contains(got, "sourceRanges") {
				t.Fatalf("version %d, slice %d: the writer holds %q, want %q in it", i+2, j, got, tc.want)
			}
		}
	}
	if !reflect.DeepEqual(held.s, held.copy) || first.SourceRanges[0].String() != "10.0.0.0/8" {
		t.Errorf("the first version's Service changed: %+v, was %+v", first, held.copy)
	}

	// Dual stack, IPv4 ranges only: the IPv6 frontend gets the shared
	// deny range. (No NodePort: expanding one to the node's addresses
	// allocates, ranges or not.)
	dual := obj("6", "10.0.0.0/8")
	dual.Spec.Ports[0].NodePort = 0
	dual.Status.LoadBalancer.Ingress = append(dual.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: "2001:db8:1::5"})
	conv = svcmanager.NewConverter()
	m = svcmanager.New(&countingWriter{}, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	n := 0
	change := func() {
		n++
		m.Upsert(svcmanager.SourceKubernetes, conv.Convert(dual, []*discoveryv1.EndpointSlice{vs[n%2]}))
	}
	change()
	change()
	if n := testing.AllocsPerRun(100, change); n != 0 {
		t.Errorf("a slice change of a Service with source ranges allocates %v times, want 0", n)
	}
}
