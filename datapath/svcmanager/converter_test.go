package svcmanager_test

import (
	"reflect"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

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
