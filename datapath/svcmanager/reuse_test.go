package svcmanager_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// versions returns n versions of slice web-a, each of a different
// size and endpoints, so that a room is sometimes too small.
func versions(n int) []*discoveryv1.EndpointSlice { return sliceVersions("web-a", 0, n) }

// sliceVersions returns n versions of slice name, addresses in
// 10.net.0.0/16.
func sliceVersions(name string, net, n int) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for v := range n {
		var eps []string
		for j := range 1 + (v*7)%5 {
			eps = append(eps, fmt.Sprintf("10.%d.%d.%d", net, v%3, j+1))
		}
		sl := slice(name, map[string]int32{"http": 8080}, eps...)
		sl.ResourceVersion = fmt.Sprint(10 + v)
		out = append(out, sl)
	}
	return out
}

// TestConverterReuse: once the manager holds a Service of the object, a
// change of its slice allocates nothing (the manager gives back the
// Service it replaced, and the Converter makes the next one in it), and
// the writer holds every version right.
func TestConverterReuse(t *testing.T) {
	svc := k8sService("web", []string{"10.96.0.10"}, "http:80:http")
	svc.ResourceVersion = "1"
	two := versions(2)
	conv := svcmanager.NewConverter()
	m := svcmanager.New(&countingWriter{}, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	i := 0
	change := func() {
		i++
		m.Upsert(svcmanager.SourceKubernetes, conv.Convert(svc, []*discoveryv1.EndpointSlice{two[i%2]}))
	}
	change()
	change()
	if n := testing.AllocsPerRun(100, change); n != 0 {
		t.Errorf("a slice change allocates %v times, want 0", n)
	}

	w := newFakeWriter()
	m = svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	conv = svcmanager.NewConverter()
	// One slice, a second one coming and going (a service grown past a
	// slice), each changing or not, in random order: a kept slice's
	// backends are never made again in.
	r := rand.New(rand.NewPCG(3, 4))
	as, bs := versions(7), sliceVersions("web-b", 1, 3)
	a, b := 0, -1
	for step := range 400 {
		if r.IntN(2) == 0 {
			a = r.IntN(len(as))
		}
		switch {
		case r.IntN(3) == 0 && b < 0:
			b = r.IntN(len(bs))
		case r.IntN(3) == 0:
			b = -1
		case b >= 0 && r.IntN(2) == 0:
			b = r.IntN(len(bs))
		}
		eps := []*discoveryv1.EndpointSlice{as[a]}
		if b >= 0 {
			eps = append(eps, bs[b])
		}
		m.Upsert(svcmanager.SourceKubernetes, conv.Convert(svc, eps))
		want := svcmanager.Desired(svcmanager.FromKubernetes(svc, eps), nil, node)
		if got := w.Dump(); !slices.Equal(got, renderAll(want)) {
			t.Fatalf("step %d: the writer holds %q, want %q", step, got, renderAll(want))
		}
	}
}

// TestConverterReuseAcrossServices: a Service's first changes after the
// initial sync allocate nothing either, once other changes were made,
// when the service does not grow: they make their backends and their
// Service in what the manager gave back of earlier changes of other
// services. The writer holds every service right.
func TestConverterReuseAcrossServices(t *testing.T) {
	const n = 60
	objs := make([]*corev1.Service, n)
	vers := make([][]*discoveryv1.EndpointSlice, n)
	for i := range objs {
		name := fmt.Sprintf("svc-%d", i)
		objs[i] = k8sService(name, []string{fmt.Sprintf("10.96.0.%d", 1+i)}, "http:80:http")
		objs[i].ResourceVersion = "1"
		vers[i] = sliceVersions(name+"-a", i, 7) // 3 endpoints at 1 and 6, 5 at 2
	}
	// run syncs every service at version 1, then changes services 0 to
	// k-1, each twice in a row (to version 2, two endpoints more, then
	// to 6, three other endpoints), as a rollout does.
	run := func(w datapath.LBMapWriter, k int, measure bool) {
		conv := svcmanager.NewConverter()
		m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
		for i := range objs {
			m.Upsert(svcmanager.SourceKubernetes, conv.Convert(objs[i], vers[i][1:2]))
		}
		if err := m.Reconcile(); err != nil {
			t.Fatal(err)
		}
		next := 0
		change := func() {
			i := next
			next++
			m.Upsert(svcmanager.SourceKubernetes, conv.Convert(objs[i], vers[i][2:3]))
			m.Upsert(svcmanager.SourceKubernetes, conv.Convert(objs[i], vers[i][6:7]))
		}
		for range 3 {
			change()
		}
		if measure {
			if a := testing.AllocsPerRun(k-4, change); a != 0 {
				t.Errorf("a service's first changes allocate %v times, want 0", a)
			}
		}
		for next < k {
			change()
		}
	}
	run(&countingWriter{}, n, true)

	w := newFakeWriter()
	run(w, n/2, false)
	var want []string
	for i := range objs {
		v := 1
		if i < n/2 {
			v = 6
		}
		want = append(want, renderAll(svcmanager.Desired(svcmanager.FromKubernetes(objs[i], vers[i][v:v+1]), nil, node))...)
	}
	slices.Sort(want)
	got := w.Dump()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the writer holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestConverterPinned: a Service that went to an observer, to a second
// manager or under a second source is never made again in: each Service
// a holder got stays as it was when it got it.
func TestConverterPinned(t *testing.T) {
	for _, tc := range []struct {
		name string
		// upsert hands s to the holders and returns what they keep.
		setup func(t *testing.T) func(s *svcmanager.Service) []kept
	}{
		{"an observer", func(t *testing.T) func(*svcmanager.Service) []kept {
			m := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
			var got []kept
			m.Observe(func(c svcmanager.Change) {
				if c.Service != nil {
					got = append(got, keep(c.Service))
				}
			}, svcmanager.SourceKubernetes)
			return func(s *svcmanager.Service) []kept {
				m.Upsert(svcmanager.SourceKubernetes, s)
				return got
			}
		}},
		{"an observer from after the first", func(t *testing.T) func(*svcmanager.Service) []kept {
			m := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
			var got []kept
			return func(s *svcmanager.Service) []kept {
				m.Upsert(svcmanager.SourceKubernetes, s)
				if got == nil {
					got = []kept{}
					m.Observe(func(c svcmanager.Change) {
						if c.Service != nil {
							got = append(got, keep(c.Service))
						}
					})
				}
				return got
			}
		}},
		{"two managers", func(t *testing.T) func(*svcmanager.Service) []kept {
			m1 := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
			m2 := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
			var got []kept
			return func(s *svcmanager.Service) []kept {
				m1.Upsert(svcmanager.SourceKubernetes, s)
				m2.Upsert(svcmanager.SourceKubernetes, s)
				got = append(got, keep(s))
				return got
			}
		}},
		{"two sources", func(t *testing.T) func(*svcmanager.Service) []kept {
			m := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
			var got []kept
			return func(s *svcmanager.Service) []kept {
				m.Upsert(svcmanager.SourceKubernetes, s)
				if len(got) == 0 {
					m.Upsert(svcmanager.SourceFile, s) // the file's stays this one
				}
				got = append(got, keep(s))
				return got[:1]
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := k8sService("web", []string{"10.96.0.10"}, "http:80:http")
			svc.ResourceVersion = "1"
			conv := svcmanager.NewConverter()
			upsert := tc.setup(t)
			vs := versions(5)
			var got []kept
			for step := range 40 {
				// Each version twice: the second an equal Service, no change.
				got = upsert(conv.Convert(svc, []*discoveryv1.EndpointSlice{vs[(step/2)%len(vs)]}))
			}
			if len(got) == 0 {
				t.Fatal("the holder got no Service")
			}
			for i, k := range got {
				if !reflect.DeepEqual(k.s, k.copy) {
					t.Fatalf("Service %d changed after it was handed over: %+v, was %+v", i, k.s.Backends, k.copy.Backends)
				}
			}
		})
	}
}

// TestConverterNewVersion: a new version of a Service object takes over
// the slices of the one before, and their backends are still those of
// the Services made of the old version; another holder of one of those
// (here the state file's entry) keeps it as it was while the new
// version's slices change.
func TestConverterNewVersion(t *testing.T) {
	conv := svcmanager.NewConverter()
	m := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
	vs := versions(4)
	svc := k8sService("web", []string{"10.96.0.10"}, "http:80:http")
	svc.ResourceVersion = "1"
	first := conv.Convert(svc, []*discoveryv1.EndpointSlice{vs[2]}) // the largest
	m.Upsert(svcmanager.SourceKubernetes, first)
	m.Upsert(svcmanager.SourceFile, first)
	want := *first
	want.Backends = slices.Clone(first.Backends)

	svc2 := k8sService("web", []string{"10.96.0.10"}, "http:80:http")
	svc2.ResourceVersion = "2"
	for _, sl := range []*discoveryv1.EndpointSlice{vs[2], vs[1], vs[3], vs[0], vs[1]} {
		m.Upsert(svcmanager.SourceKubernetes, conv.Convert(svc2, []*discoveryv1.EndpointSlice{sl}))
	}
	if !reflect.DeepEqual(*first, want) {
		t.Fatalf("the first version's Service changed: backends %+v, was %+v", first.Backends, want.Backends)
	}
}

// kept is a Service another holder got, with a copy of it then.
type kept struct{ s, copy *svcmanager.Service }

func keep(s *svcmanager.Service) kept {
	c := *s
	c.Backends, c.Warnings, c.SourceRanges = slices.Clone(s.Backends), slices.Clone(s.Warnings), slices.Clone(s.SourceRanges)
	return kept{s, &c}
}

// sameService reports whether a and b have the same exported fields
// (a Converter's Services carry a ref of their own).
func sameService(a, b *svcmanager.Service) bool {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range va.NumField() {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}

// TestConverterReuseRandom: random changes of a few Services (new
// object versions, some LoadBalancers with source ranges, good or bad;
// one or two slices changing or not, deletions), each
// converted and upserted as the watcher does, some also handed to the
// state file's source, to a second manager or seen by an observer that
// joins late (none of their Services is made again in). After every step the Service the manager holds for each
// object is what FromKubernetes makes of the objects, and every Service
// another holder got is as it was then. The Converter keeps its records
// itself (Convert), or in a Slot per name (ConvertIn, the watcher's way).
func TestConverterReuseRandom(t *testing.T) {
	for _, slots := range []bool{false, true} {
		t.Run(fmt.Sprintf("slots=%v", slots), func(t *testing.T) { converterReuseRandom(t, slots) })
	}
}

func converterReuseRandom(t *testing.T, slots bool) {
	r := rand.New(rand.NewPCG(7, 8))
	conv := svcmanager.NewConverter()
	m := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
	m2 := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
	var held []kept
	hold := func(s *svcmanager.Service) { held = append(held, keep(s)) }
	type state struct {
		obj    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		last   *svcmanager.Service
		slot   svcmanager.Slot
	}
	live := map[string]*state{}
	rv := 0
	for step := range 2000 {
		name := fmt.Sprintf("svc-%d", r.IntN(4))
		st := live[name]
		if st != nil && r.IntN(12) == 0 {
			conv.ForgetService("default", name) // a deleted state takes its slot with it
			m.Delete(svcmanager.SourceKubernetes, "default/"+name)
			delete(live, name)
			continue
		}
		if st == nil || r.IntN(5) == 0 { // a new version of the object
			rv++
			obj := k8sService(name, []string{fmt.Sprintf("10.96.0.%d", 1+len(name)%250+int(name[len(name)-1]-'0'))}, "http:80:http")
			obj.ResourceVersion = fmt.Sprint(rv)
			if r.IntN(3) == 0 { // a LoadBalancer, some restricted to source ranges
				obj.Spec.Type = corev1.ServiceTypeLoadBalancer
				obj.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113." + name[len(name)-1:]}}
				pool := []string{"10.0.0.0/8", "192.168.1.0/24", "fd00::/64", "bogus"}
				for range r.IntN(3) {
					obj.Spec.LoadBalancerSourceRanges = append(obj.Spec.LoadBalancerSourceRanges, pool[r.IntN(len(pool))])
				}
			}
			if st == nil {
				st = &state{}
				live[name] = st
			}
			st.obj = obj
		}
		for k := range 2 { // each slice changes, goes or comes, or stays
			if r.IntN(2) == 0 {
				continue
			}
			if k < len(st.slices) && r.IntN(4) == 0 {
				st.slices = slices.Delete(st.slices, k, k+1)
				continue
			}
			var eps []string
			for j := range r.IntN(6) {
				eps = append(eps, fmt.Sprintf("10.%d.%d.%d", k, r.IntN(3), j+1))
			}
			rv++
			sl := slice(fmt.Sprintf("%s-%d", name, k), map[string]int32{"http": 8080}, eps...)
			sl.ResourceVersion = fmt.Sprint(rv)
			if k < len(st.slices) {
				st.slices[k] = sl
			} else {
				st.slices = append(st.slices, sl)
			}
		}
		var s *svcmanager.Service
		if slots {
			s = conv.ConvertIn(&st.slot, st.obj, st.slices)
		} else {
			s = conv.Convert(st.obj, st.slices)
		}
		st.last = s
		m.Upsert(svcmanager.SourceKubernetes, s)
		switch r.IntN(40) {
		case 0:
			m.Upsert(svcmanager.SourceFile, s)
			hold(s)
		case 1:
			m2.Upsert(svcmanager.SourceKubernetes, s)
			hold(s)
		}
		if step == 1500 { // from here on every Service goes to the observer too
			m.Observe(func(c svcmanager.Change) {
				if c.Service != nil {
					hold(c.Service)
				}
			}, svcmanager.SourceKubernetes)
		}
		for n, st := range live {
			if want := svcmanager.FromKubernetes(st.obj, st.slices); !sameService(st.last, want) {
				t.Fatalf("step %d: %s: the manager's Service has backends %+v, ranges %v, want %+v, %v", step, n, st.last.Backends, st.last.SourceRanges, want.Backends, want.SourceRanges)
			}
		}
		if step%10 != 9 {
			continue
		}
		for i, k := range held {
			if !reflect.DeepEqual(k.s, k.copy) {
				t.Fatalf("step %d: held Service %d changed: backends %+v, ranges %v, was %+v, %v", step, i, k.s.Backends, k.s.SourceRanges, k.copy.Backends, k.copy.SourceRanges)
			}
		}
	}
}
