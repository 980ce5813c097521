package svcmanager_test

import (
	"io"
	"log/slog"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// lbLocal is a LoadBalancer Service web with externalTrafficPolicy
// Local and health-check NodePort hc.
func lbLocal(hc int32) *corev1.Service {
	svc := k8sService("web", []string{"10.96.0.10"}, "http:80:8080:30080", "admin:81:9090:30081")
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	svc.Spec.HealthCheckNodePort = hc
	return svc
}

// signalled reports whether m signalled a health change (and takes it).
func signalled(m *svcmanager.Manager) bool {
	select {
	case <-m.HealthChanged():
		return true
	default:
		return false
	}
}

// TestHealthChecks: a LoadBalancer Service with externalTrafficPolicy
// Local has a health check on its healthCheckNodePort counting its
// ready endpoints on this node (each address once, whatever its ports;
// an endpoint of no node counts, as the datapath's Local frontends keep
// it); a change of such a service, its deletion and a node rename
// signal; other services neither have one nor signal.
func TestHealthChecks(t *testing.T) {
	if svc := svcmanager.FromKubernetes(lbLocal(31000), nil); svc.HealthCheckNodePort != 31000 {
		t.Errorf("HealthCheckNodePort %d, want 31000", svc.HealthCheckNodePort)
	}
	cluster := lbLocal(31000)
	cluster.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	if svc := svcmanager.FromKubernetes(cluster, nil); svc.HealthCheckNodePort != 0 {
		t.Errorf("externalTrafficPolicy Cluster: HealthCheckNodePort %d, want none", svc.HealthCheckNodePort)
	}

	m := svcmanager.New(newFakeWriter(), svcmanager.Node{Name: "node1"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	plain := svcmanager.FromKubernetes(k8sService("other", []string{"10.96.0.11"}, "http:80:8080"),
		[]*discoveryv1.EndpointSlice{slice("other-1", map[string]int32{"http": 8080}, "10.0.1.9@node1")})
	m.Upsert(svcmanager.SourceKubernetes, plain)
	if signalled(m) || len(m.HealthChecks()) != 0 {
		t.Fatal("a service without a health-check NodePort has a health check")
	}
	eps := slice("web-1", map[string]int32{"http": 8080, "admin": 9090},
		"10.0.1.1@node1", "10.0.1.2@node1", "10.0.1.3@node2", "10.0.1.4@node1!t", "10.0.1.5@node1!r", "10.0.1.6")
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(lbLocal(31000), []*discoveryv1.EndpointSlice{eps}))
	want := []svcmanager.HealthCheck{{Namespace: "default", Name: "web", Port: 31000, LocalEndpoints: 3}}
	if got := m.HealthChecks(); !signalled(m) || !slices.Equal(got, want) {
		t.Fatalf("HealthChecks = %v, want %v (and a signal)", got, want)
	}

	m.SetNode(svcmanager.Node{Name: "node2"})
	want[0].LocalEndpoints = 2 // 10.0.1.3 and 10.0.1.6
	if got := m.HealthChecks(); !signalled(m) || !slices.Equal(got, want) {
		t.Fatalf("after the node's rename: %v, want %v (and a signal)", got, want)
	}
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(lbLocal(31001), nil))
	want = []svcmanager.HealthCheck{{Namespace: "default", Name: "web", Port: 31001}}
	if got := m.HealthChecks(); !signalled(m) || !slices.Equal(got, want) {
		t.Fatalf("a new port, no endpoints: %v, want %v (and a signal)", got, want)
	}
	// Cluster policy: no health check any more.
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(cluster, nil))
	if got := m.HealthChecks(); !signalled(m) || len(got) != 0 {
		t.Fatalf("externalTrafficPolicy Cluster: %v, want none (and a signal)", got)
	}
	m.Upsert(svcmanager.SourceKubernetes, svcmanager.FromKubernetes(lbLocal(31002), nil))
	signalled(m)
	m.Delete(svcmanager.SourceKubernetes, "default/web")
	if got := m.HealthChecks(); !signalled(m) || len(got) != 0 {
		t.Fatalf("deleted: %v, want none (and a signal)", got)
	}
	m.Upsert(svcmanager.SourceKubernetes, plain)
	if signalled(m) {
		t.Error("a change of a service without a health-check NodePort signalled")
	}
}
