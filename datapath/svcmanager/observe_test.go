package svcmanager_test

import (
	"fmt"
	"log/slog"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// TestObserve: an observer gets the services held when it starts, then
// every change of any source in order (an equal service is no change),
// and may call the manager from its callback, as the global service
// cache's subscribers do.
func TestObserve(t *testing.T) {
	m := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
	web := k8sService("web", []string{"10.96.0.10"}, "http:80:8080")
	global("")(web)
	a := slice("web-a", map[string]int32{"http": 8080}, "10.0.1.1")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(web, []*discoveryv1.EndpointSlice{a}))

	var got []string
	m.Observe(func(c svcmanager.Change) {
		backends := -1
		if c.Service != nil {
			backends = len(c.Service.Backends)
			// Re-entry: what the cache's subscriber does on a change.
			m.SetRemoteBackends(c.NamespacedName, remote("c2", 2, "10.2.0.1:8080"))
		}
		got = append(got, fmt.Sprintf("%s %s %d", c.Source, c.NamespacedName, backends))
	})
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(web, []*discoveryv1.EndpointSlice{a}))
	b := slice("web-a", map[string]int32{"http": 8080}, "10.0.1.1", "10.0.1.2")
	m.Replace(svcmanager.SourceFile, []*svcmanager.Service{svcmanager.FromKubernetes(web, []*discoveryv1.EndpointSlice{b})})
	m.Replace(svcmanager.SourceFile, []*svcmanager.Service{svcmanager.FromKubernetes(web, []*discoveryv1.EndpointSlice{b})})
	m.Replace(svcmanager.SourceFile, nil)
	m.Delete(svcmanager.SourceKubernetes, "default/web")
	m.Delete(svcmanager.SourceKubernetes, "default/web")
	want := []string{
		"k8s default/web 1",  // held when Observe was called
		"file default/web 2", // the first Upsert was equal: no change
		"file default/web -1",
		"k8s default/web -1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	if st := m.Stats(); st.RemoteBackends != 0 || st.Services != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// TestObserveSources: an observer of one source gets neither the
// services nor the changes of another.
func TestObserveSources(t *testing.T) {
	m := svcmanager.New(newFakeWriter(), node, slog.New(slog.DiscardHandler))
	web := k8sService("web", []string{"10.96.0.10"}, "http:80:8080")
	a := slice("web-a", map[string]int32{"http": 8080}, "10.0.1.1")
	b := slice("web-a", map[string]int32{"http": 8080}, "10.0.1.1", "10.0.1.2")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(web, []*discoveryv1.EndpointSlice{a}))
	var got []string
	m.Observe(func(c svcmanager.Change) { got = append(got, c.Source+" "+c.NamespacedName) }, svcmanager.SourceFile)
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(web, []*discoveryv1.EndpointSlice{b}))
	m.Replace(svcmanager.SourceFile, []*svcmanager.Service{svcmanager.FromKubernetes(web, []*discoveryv1.EndpointSlice{b})})
	m.Delete(svcmanager.SourceKubernetes, "default/web")
	if want := []string{"file default/web"}; !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
}
