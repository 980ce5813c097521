package svcmanager_test

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

func checkCalls(t *testing.T, w *fakeWriter, what string, want ...string) {
	t.Helper()
	if got := w.Take(); !slices.Equal(got, want) {
		t.Errorf("%s: writer calls =\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestManagerMinimalUpdates: nothing is written before the initial
// reconcile, which gets everything; then a slice change rewrites only
// the frontend of its family and port, a change that changes nothing
// writes nothing, and a deleted service deletes its frontends.
func TestManagerMinimalUpdates(t *testing.T) {
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	svc := k8sService("web", []string{"10.96.0.10", "fd00::10"}, "http:80:web", "dns:53:dns/UDP")
	v4 := slice("web-a", map[string]int32{"http": 8080, "dns/UDP": 53}, "10.0.1.1")
	v6 := slice("web-b", map[string]int32{"http": 9090, "dns/UDP": 53}, "fd00:1::1")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{v4, v6}))
	checkCalls(t, w, "before the reconcile")

	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, w, "reconcile", "reconcile 4")
	if st := m.Stats(); !st.Reconciled || st.ReconcileAdded != 4 || st.Frontends != 4 || st.Backends != 4 {
		t.Errorf("stats after reconcile = %+v", st)
	}

	v4b := slice("web-a", map[string]int32{"http": 8080, "dns/UDP": 53}, "10.0.1.1", "10.0.1.2")
	v4b.Endpoints[1].Conditions.Ready = ptr(false) // not ready: no change
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{v4b, v6}))
	checkCalls(t, w, "a not ready endpoint")

	v4c := slice("web-a", map[string]int32{"http": 8080, "dns/UDP": 53}, "10.0.1.1", "10.0.1.2")
	v4c.Ports = v4c.Ports[:0]
	v4c.Ports = append(v4c.Ports, discoveryv1.EndpointPort{Name: ptr("http"), Port: ptr(int32(8080))},
		discoveryv1.EndpointPort{Name: ptr("dns"), Port: ptr(int32(53)), Protocol: ptr(udp)})
	v4c.Endpoints[1].Conditions.Ready = ptr(true)
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{v4c, v6}))
	checkCalls(t, w, "a new IPv4 endpoint",
		"upsert 10.96.0.10:53/UDP ClusterIP -> 10.0.1.1:53/UDP(active) 10.0.1.2:53/UDP(active)",
		"upsert 10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)")

	m.Delete(svcmanager.SourceKubernetes, "default/web")
	got := w.Take()
	slices.Sort(got)
	want := []string{"delete 10.96.0.10:53/UDP", "delete 10.96.0.10:80/TCP", "delete [fd00::10]:53/UDP", "delete [fd00::10]:80/TCP"}
	if !slices.Equal(got, want) {
		t.Errorf("delete: calls = %v, want %v", got, want)
	}
	if st := m.Stats(); st.Upserts != 2 || st.Deletes != 4 || st.Frontends != 0 || st.Services != 0 {
		t.Errorf("stats after delete = %+v", st)
	}
}

// TestManagerRemoteBackends: the remote clusters' backends rewrite a
// global service's frontends, and with affinity local only when the
// local backends go.
func TestManagerRemoteBackends(t *testing.T) {
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	svc := k8sService("web", []string{"10.96.0.10"}, "http:80:8080")
	global("local")(svc)
	local := slice("web-a", map[string]int32{"http": 8080}, "10.0.1.1")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{local}))
	m.SetRemoteBackends("default/web", remote("c2", 2, "10.2.0.1:8080"))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, w, "reconcile", "reconcile 1")
	if got, want := renderGet(w, m.Frontends()[0].Frontend), "10.96.0.10:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)"; got != want {
		t.Errorf("after reconcile = %q, want %q", got, want)
	}
	m.SetRemoteBackends("default/web", slices.Concat(remote("c2", 2, "10.2.0.1:8080"), remote("c3", 3, "10.3.0.1:8080")))
	checkCalls(t, w, "a remote backend more, affinity local")

	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, nil))
	checkCalls(t, w, "local backends gone",
		"upsert 10.96.0.10:80/TCP ClusterIP -> 10.2.0.1:8080/TCP(active,c2) 10.3.0.1:8080/TCP(active,c3)")
	m.SetRemoteBackends("default/web", nil)
	checkCalls(t, w, "remote backends gone", "upsert 10.96.0.10:80/TCP ClusterIP ->")
	if st := m.Stats(); st.Global != 1 || st.RemoteBackends != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// TestManagerWriteFailures: failed writes are counted, reported and
// written again by RetryFailed; a failed reconcile is an error.
func TestManagerWriteFailures(t *testing.T) {
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	w.SetFailing(true)
	if err := m.Reconcile(); !errors.Is(err, errFull) {
		t.Fatalf("Reconcile = %v, want %v", err, errFull)
	}
	w.SetFailing(false)
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); !st.PendingSince.IsZero() {
		t.Errorf("pending since %v after a successful reconcile", st.PendingSince)
	}
	w.Take()
	w.SetFailing(true)
	before := time.Now()
	svc := k8sService("web", []string{"10.96.0.10"}, "http:80:8080")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, nil))
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(k8sService("db", []string{"10.96.0.11"}, "sql:5432:5432"), nil))
	m.Delete(svcmanager.SourceKubernetes, "default/db")
	st := m.Stats()
	if st.Failures != 4 || st.Pending != 2 || !errors.Is(st.LastError, errFull) || !m.NeedsRetry() {
		t.Errorf("stats = %+v, want 4 failures (one the reconcile), 2 pending", st)
	}
	// Pending since the first of the failed upserts (the failed
	// reconcile was made good by the next).
	if st.PendingSince.IsZero() || st.PendingSince.After(st.LastErrorTime) || st.PendingSince.Before(before) {
		t.Errorf("pending since %v, want between %v and the last error %v", st.PendingSince, before, st.LastErrorTime)
	}
	if reconciled, n, since := m.SyncState(); !reconciled || n != 2 || !since.Equal(st.PendingSince) {
		t.Errorf("SyncState = %v, %d, %v; want what Stats says", reconciled, n, since)
	}
	w.Take()
	if err := m.RetryFailed(); !errors.Is(err, errFull) {
		t.Errorf("RetryFailed = %v, want %v", err, errFull)
	}
	w.SetFailing(false)
	w.Take()
	if err := m.RetryFailed(); err != nil {
		t.Fatal(err)
	}
	// db's delete is retried too, but the writer never held db (its
	// upsert failed): no write.
	checkCalls(t, w, "retry", "upsert 10.96.0.10:80/TCP ClusterIP ->")
	if m.NeedsRetry() {
		t.Error("NeedsRetry after a successful retry")
	}
	if st := m.Stats(); !st.PendingSince.IsZero() {
		t.Errorf("pending since %v after a successful retry", st.PendingSince)
	}
	if reconciled, n, since := m.SyncState(); !reconciled || n != 0 || !since.IsZero() {
		t.Errorf("SyncState after a successful retry = %v, %d, %v", reconciled, n, since)
	}
}

// TestManagerConflicts: three services wanting one frontend: the first
// keeps it; when it goes, the next gets it, then the last.
func TestManagerConflicts(t *testing.T) {
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	w.Take()
	a := k8sService("a", []string{"10.96.0.10"}, "http:80:8080")
	a.Spec.ExternalIPs = []string{"198.51.100.7"}
	b := k8sService("b", []string{"10.96.0.11"}, "http:80:9090")
	b.Spec.ExternalIPs = []string{"198.51.100.7"}
	c := k8sService("c", []string{"10.96.0.12"}, "http:80:9090")
	c.Spec.ExternalIPs = []string{"198.51.100.7"}
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(a, nil))
	m.Upsert(svcmanager.SourceFile, svcmanager.FromKubernetes(b, nil))
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(c, nil))
	if st := m.Stats(); st.Conflicts != 2 || st.Frontends != 4 {
		t.Errorf("stats = %+v, want 2 conflicts, 4 frontends", st)
	}
	m.Delete(svcmanager.SourceKubernetes, "default/c")
	if st := m.Stats(); st.Conflicts != 1 || st.Frontends != 3 {
		t.Errorf("after c's deletion: stats = %+v, want 1 conflict, 3 frontends", st)
	}
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(c, nil))
	w.Take()
	m.Delete(svcmanager.SourceKubernetes, "default/a")
	got := w.Take()
	slices.Sort(got)
	want := []string{"delete 10.96.0.10:80/TCP", "delete 198.51.100.7:80/TCP", "upsert 198.51.100.7:80/TCP ExternalIPs ->"}
	if !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	if st := m.Stats(); st.Conflicts != 1 || st.Frontends != 3 {
		t.Errorf("stats = %+v, want c still waiting, 3 frontends", st)
	}
	if fes := m.Frontends(); len(fes) != 3 || fes[1].Name != "default/b" || fes[1].Frontend.Port != 80 {
		t.Errorf("Frontends = %+v, want b's external IP", fes)
	}
	m.Delete(svcmanager.SourceFile, "default/b")
	if fes := m.Frontends(); len(fes) != 2 || fes[1].Name != "default/c" || fes[1].Frontend.Port != 80 || m.Stats().Conflicts != 0 {
		t.Errorf("Frontends = %+v, want c's external IP after b's deletion", fes)
	}
}

// TestManagerWithoutWriter: the desired frontends are computed for the
// API; nothing is written.
func TestManagerWithoutWriter(t *testing.T) {
	m := svcmanager.New(nil, node, slog.New(slog.DiscardHandler))
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(k8sService("web", []string{"10.96.0.10"}, "http:80:8080"), nil))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if fes := m.Frontends(); len(fes) != 1 || fes[0].ID != 1 || m.HasWriter() {
		t.Errorf("Frontends = %+v", fes)
	}
}

// TestManagerNodeAndReplace: a new node address adds its NodePort
// frontend and drops the old one, and touches no service without a
// NodePort (a new name touches all); Replace keeps the services it is
// given and deletes the others of the same source only.
func TestManagerNodeAndReplace(t *testing.T) {
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	np := k8sService("np", []string{"10.96.0.30"}, "http:80:8080:30080")
	np.Spec.Type = corev1.ServiceTypeNodePort
	other := k8sService("other", []string{"10.96.0.31"}, "http:80:8080")
	m.Replace(svcmanager.SourceFile, []*svcmanager.Service{svcmanager.FromKubernetes(np, nil)})
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(other, nil))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	w.Take()

	moved := node
	moved.Addrs = []netip.Addr{netip.MustParseAddr("192.0.2.11")}
	asked := w.Asked()
	m.SetNode(moved)
	checkCalls(t, w, "the node's address changed",
		"upsert 192.0.2.11:30080/TCP NodePort ->", "delete 192.0.2.10:30080/TCP")
	if n := w.Asked() - asked; n != 3 {
		t.Errorf("a new node address: %d frontends handed to the writer, want np's 3 (other has no NodePort)", n)
	}
	renamed := moved
	renamed.Name = "node2"
	asked = w.Asked()
	m.SetNode(renamed)
	if n := w.Asked() - asked; n != 4 {
		t.Errorf("a new node name: %d frontends handed to the writer, want all 4", n)
	}
	m.SetNode(moved)
	w.Take()
	m.SetNode(moved)
	checkCalls(t, w, "the same node again")

	m.Replace(svcmanager.SourceFile, nil)
	got := w.Take()
	slices.Sort(got)
	want := []string{"delete 0.0.0.0:30080/TCP", "delete 10.96.0.30:80/TCP", "delete 192.0.2.11:30080/TCP"}
	if !slices.Equal(got, want) {
		t.Errorf("Replace(nil): calls = %v, want %v", got, want)
	}
	if fes := m.Frontends(); len(fes) != 1 || fes[0].Name != "default/other" {
		t.Errorf("Frontends = %+v, want default/other's only", fes)
	}
}

// TestManagerFrontendsChange: a service whose ports change rewrites the
// new frontends only and deletes the gone ones; those before, between and
// after them are untouched.
func TestManagerFrontendsChange(t *testing.T) {
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	sl := slice("web-a", map[string]int32{"a": 8080, "b": 8081, "c": 8082, "d": 8083}, "10.0.1.1")
	svc := k8sService("web", []string{"10.96.0.10"}, "a:80:a", "b:81:b", "c:82:c")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl}))
	w.Take()
	svc = k8sService("web", []string{"10.96.0.10"}, "a:80:a", "c:82:c", "d:83:d")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl}))
	checkCalls(t, w, "port b replaced by d",
		"upsert 10.96.0.10:83/TCP ClusterIP -> 10.0.1.1:8083/TCP(active)",
		"delete 10.96.0.10:81/TCP")
	svc = k8sService("web", []string{"10.96.0.10"}, "c:82:c")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl}))
	checkCalls(t, w, "only c left", "delete 10.96.0.10:80/TCP", "delete 10.96.0.10:83/TCP")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl}))
	checkCalls(t, w, "the same again")
	if fes := m.Frontends(); len(fes) != 1 || fes[0].Frontend.Port != 82 {
		t.Errorf("Frontends = %+v, want port 82 only", fes)
	}
}

// TestManagerServiceRef: the Services a Converter makes of one object
// take the manager that claimed them straight to their entry; another
// manager, another source, a deletion and a new version still find the
// right one.
func TestManagerServiceRef(t *testing.T) {
	conv := svcmanager.NewConverter()
	svc := k8sService("web", []string{"10.96.0.10"}, "http:80:http")
	svc.ResourceVersion = "1"
	version := 1
	sl := func(eps ...string) *discoveryv1.EndpointSlice {
		s := slice("web-a", map[string]int32{"http": 8080}, eps...)
		version++
		s.ResourceVersion = fmt.Sprint(version)
		return s
	}
	one, other := newFakeWriter(), newFakeWriter()
	m1 := svcmanager.New(one, node, slog.New(slog.DiscardHandler))
	m2 := svcmanager.New(other, node, slog.New(slog.DiscardHandler))
	for _, m := range []*svcmanager.Manager{m1, m2} {
		if err := m.Reconcile(); err != nil {
			t.Fatal(err)
		}
	}
	fe := datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.10"), Port: 80, Proto: datapath.ProtoTCP}
	want := func(what string, w *fakeWriter, backends string) {
		t.Helper()
		if got := renderGet(w, fe); got != "10.96.0.10:80/TCP ClusterIP -> "+backends {
			t.Errorf("%s: writer holds %q, want backends %s", what, got, backends)
		}
	}
	upsert := func(source string, s *discoveryv1.EndpointSlice, ms ...*svcmanager.Manager) {
		x := conv.Convert(svc, []*discoveryv1.EndpointSlice{s})
		for _, m := range ms {
			m.Upsert(source, x)
		}
	}
	upsert(svcmanager.SourceKubernetes, sl("10.0.1.1"), m1, m2)
	upsert(svcmanager.SourceKubernetes, sl("10.0.1.1", "10.0.1.2"), m1, m2)
	want("both managers, a change", one, "10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)")
	want("both managers, a change", other, "10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(active)")

	m1.Delete(svcmanager.SourceKubernetes, "default/web")
	if got, ok := one.Get(fe); ok {
		t.Errorf("after the deletion the writer holds %s", render(got))
	}
	upsert(svcmanager.SourceKubernetes, sl("10.0.1.3"), m1)
	upsert(svcmanager.SourceKubernetes, sl("10.0.1.3", "10.0.1.4"), m1)
	want("back after a deletion", one, "10.0.1.3:8080/TCP(active) 10.0.1.4:8080/TCP(active)")
	if st := m1.Stats(); st.Services != 1 || st.Frontends != 1 || st.Backends != 2 {
		t.Errorf("after the deletion and back: %d services, %d frontends, %d backends; want 1, 1, 2", st.Services, st.Frontends, st.Backends)
	}

	// The same object from the state file: its own entry, the other
	// source's untouched (the frontend stays with the first).
	upsert(svcmanager.SourceFile, sl("10.0.1.9"), m1)
	upsert(svcmanager.SourceKubernetes, sl("10.0.1.5"), m1)
	want("k8s after the file's", one, "10.0.1.5:8080/TCP(active)")
	m1.Delete(svcmanager.SourceKubernetes, "default/web")
	want("the file's after k8s left", one, "10.0.1.9:8080/TCP(active)")

	svc = k8sService("web", []string{"10.96.0.10"}, "http:80:http")
	svc.ResourceVersion = "100"
	upsert(svcmanager.SourceKubernetes, sl("10.0.1.6"), m2)
	want("a new version of the Service", other, "10.0.1.6:8080/TCP(active)")
	if st := m2.Stats(); st.Services != 1 || st.Backends != 1 {
		t.Errorf("m2: %d services, %d backends; want 1, 1", st.Services, st.Backends)
	}
}

// TestManagerRandomFrontends: services whose frontends move between
// addresses and ports, collide with each other's and go away, in random
// order, with each change converted as the watcher converts it. After
// every change the writer holds exactly what Frontends says and no
// frontend twice: frontends kept in an entry's own room are never
// handed out while still in use.
func TestManagerRandomFrontends(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	conv := svcmanager.NewConverter()
	rv := 0
	for step := range 3000 {
		name := fmt.Sprintf("svc-%d", r.IntN(6))
		if r.IntN(6) == 0 {
			conv.ForgetService("default", name)
			m.Delete(svcmanager.SourceKubernetes, "default/"+name)
		} else {
			var ips []string
			for range 1 + r.IntN(2) {
				ips = append(ips, fmt.Sprintf("10.96.0.%d", 1+r.IntN(4)))
			}
			var ports []string
			for _, p := range []string{"http:80:http", "dns:53:dns/UDP", "web:81:http"} {
				if r.IntN(2) == 0 {
					ports = append(ports, p)
				}
			}
			svc := k8sService(name, ips[:1], ports...)
			rv++
			svc.ResourceVersion = fmt.Sprint(rv)
			var eps []string
			for j := range r.IntN(4) {
				eps = append(eps, fmt.Sprintf("10.0.%d.%d", r.IntN(3), j+1))
			}
			sl := slice(name+"-a", map[string]int32{"http": 8080, "dns/UDP": 5353}, eps...)
			rv++
			sl.ResourceVersion = fmt.Sprint(rv)
			if x := conv.Convert(svc, []*discoveryv1.EndpointSlice{sl}); x != nil {
				m.Upsert(svcmanager.SourceKubernetes, x)
			}
		}
		var want []string
		for _, e := range m.Frontends() {
			want = append(want, render(e.LBService))
		}
		slices.Sort(want)
		got := w.Dump()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: the writer holds\n%s\nthe manager wants\n%s", step, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if st := m.Stats(); st.Failures > 0 {
			t.Fatalf("step %d: %v", step, st.LastError)
		}
	}
}

// TestExternalIPsOff: with external IPs off (Cilium's
// --enable-external-ips=false) a Service's spec.externalIPs get no
// frontend, its other frontends stay; on again, they are written, and a
// service without external IPs is not rewritten.
func TestExternalIPsOff(t *testing.T) {
	w := newFakeWriter()
	m := svcmanager.New(w, node, slog.New(slog.DiscardHandler))
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	m.SetExternalIPs(false)
	svc := k8sService("web", []string{"10.96.0.10"}, "http:80:8080")
	svc.Spec.ExternalIPs = []string{"198.51.100.7"}
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, nil))
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(k8sService("plain", []string{"10.96.0.11"}, "http:80:8080"), nil))
	if got, want := w.Dump(), []string{"10.96.0.10:80/TCP ClusterIP ->", "10.96.0.11:80/TCP ClusterIP ->"}; !slices.Equal(got, want) {
		t.Fatalf("external IPs off: maps %v, want %v", got, want)
	}
	w.Take()
	m.SetExternalIPs(true)
	checkCalls(t, w, "external IPs on again", "upsert 198.51.100.7:80/TCP ExternalIPs ->")
}

// TestManagerServiceAt: every frontend of a service names it (both
// ports, UDP's apart from TCP's), a hostPort as Cilium names its HostPort
// services, and a frontend the service no longer has, or a deleted
// service's, names nothing.
func TestManagerServiceAt(t *testing.T) {
	m := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
	sl := slice("dns-a", map[string]int32{"dns": 53, "metrics": 9153}, "10.0.1.1")
	svc := k8sService("kube-dns", []string{"10.96.0.10"}, "dns:53:dns/UDP", "metrics:9153:metrics")
	svc.Namespace, sl.Namespace = "kube-system", "kube-system"
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl}))
	hp := &svcmanager.Service{Namespace: "shop", Name: "web-0", Frontends: []svcmanager.Frontend{{
		Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr("192.0.2.10"), Port: 8443, Proto: datapath.ProtoTCP}, Type: datapath.SVCTypeHostPort}}}
	m.Upsert(svcmanager.SourceHostPort, hp)
	at := func(a string, port uint16, proto uint8) string {
		ns, name, ok := m.ServiceAt(datapath.L3n4Addr{Addr: netip.MustParseAddr(a), Port: port, Proto: proto})
		if !ok {
			return ""
		}
		return ns + "/" + name
	}
	for _, tc := range []struct {
		a     string
		port  uint16
		proto uint8
		want  string
	}{
		{"10.96.0.10", 53, datapath.ProtoUDP, "kube-system/kube-dns"},
		{"10.96.0.10", 9153, datapath.ProtoTCP, "kube-system/kube-dns"},
		{"10.96.0.10", 53, datapath.ProtoTCP, ""},
		{"10.96.0.11", 53, datapath.ProtoUDP, ""},
		{"192.0.2.10", 8443, datapath.ProtoTCP, "shop/web-0:host-port:8443"},
	} {
		if got := at(tc.a, tc.port, tc.proto); got != tc.want {
			t.Errorf("ServiceAt(%s:%d/%d) = %q, want %q", tc.a, tc.port, tc.proto, got, tc.want)
		}
	}
	svc = k8sService("kube-dns", []string{"10.96.0.10"}, "dns:53:dns/UDP")
	svc.Namespace = "kube-system"
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl}))
	if got := at("10.96.0.10", 9153, datapath.ProtoTCP); got != "" {
		t.Errorf("a port the service no longer has names %q", got)
	}
	m.Delete(svcmanager.SourceKubernetes, "kube-system/kube-dns")
	m.Delete(svcmanager.SourceHostPort, "shop/web-0")
	if got := at("10.96.0.10", 53, datapath.ProtoUDP) + at("192.0.2.10", 8443, datapath.ProtoTCP); got != "" {
		t.Errorf("deleted services name %q", got)
	}

	// ServiceAt does not take the manager's lock: while services come
	// and go (a frontend's room in its entry freed and taken again), a
	// lookup gives the service that has the frontend or none, never
	// another's (run with -race).
	done := make(chan struct{})
	var wrong atomic.Value
	go func() {
		defer close(done)
		for range 2000 {
			if got := at("10.96.0.10", 53, datapath.ProtoUDP); got != "" && got != "kube-system/kube-dns" {
				wrong.Store(got)
			}
			if got := at("10.96.0.11", 53, datapath.ProtoUDP); got != "" && got != "kube-system/dns-b" {
				wrong.Store(got)
			}
		}
	}()
	other := k8sService("dns-b", []string{"10.96.0.11"}, "dns:53:dns/UDP")
	other.Namespace = "kube-system"
	for i := range 200 {
		m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(svc, []*discoveryv1.EndpointSlice{sl}))
		m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(other, []*discoveryv1.EndpointSlice{sl}))
		m.Delete(svcmanager.SourceKubernetes, "kube-system/"+[]string{"kube-dns", "dns-b"}[i%2])
	}
	<-done
	if got := wrong.Load(); got != nil {
		t.Errorf("ServiceAt named %q during changes", got)
	}
}
