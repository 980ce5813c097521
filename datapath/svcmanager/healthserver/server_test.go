package healthserver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/healthserver"
)

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// probe is a load balancer's probe of port: the status code, the body
// and the weight header; err when nothing answers.
func probe(port uint16) (int, map[string]any, string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, nil, "", err
	}
	return resp.StatusCode, body, resp.Header.Get("X-Load-Balancing-Endpoint-Weight"), nil
}

// TestServer opens a port per check and answers kube-proxy's way: 200
// with local endpoints, 503 without; a count change is answered at
// once; a port no check has any more is closed; a port in use is
// reported and tried again.
func TestServer(t *testing.T) {
	var proxyHealthy atomic.Bool
	proxyHealthy.Store(true)
	s := healthserver.New(slog.New(slog.NewTextHandler(io.Discard, nil)), "127.0.0.1").WithProxyHealth(proxyHealthy.Load)
	t.Cleanup(s.Close)
	p1, p2 := freePort(t), freePort(t)
	s.Sync([]svcmanager.HealthCheck{
		{Namespace: "default", Name: "web", Port: p1, LocalEndpoints: 2},
		{Namespace: "shop", Name: "cart", Port: p2},
	})
	if s.Ports() != 2 || s.Failed() != nil {
		t.Fatalf("%d ports open, failed: %v; want 2, none", s.Ports(), s.Failed())
	}
	code, body, weight, err := probe(p1)
	if err != nil || code != http.StatusOK || weight != "2" {
		t.Fatalf("probe of a service with 2 local endpoints: %d %v %q %v", code, body, weight, err)
	}
	svc, _ := body["service"].(map[string]any)
	if svc["namespace"] != "default" || svc["name"] != "web" || body["localEndpoints"] != 2.0 || body["serviceProxyHealthy"] != true {
		t.Errorf("body %v", body)
	}
	if code, body, _, err := probe(p2); err != nil || code != http.StatusServiceUnavailable || body["localEndpoints"] != 0.0 {
		t.Errorf("probe of a service without local endpoints: %d %v %v; want 503", code, body, err)
	}
	// The service proxy unhealthy: 503 whatever the endpoints, as
	// kube-proxy answers.
	proxyHealthy.Store(false)
	if code, body, _, err := probe(p1); err != nil || code != http.StatusServiceUnavailable || body["serviceProxyHealthy"] != false ||
		body["localEndpoints"] != 2.0 {
		t.Errorf("probe with the service proxy unhealthy: %d %v %v; want 503", code, body, err)
	}
	proxyHealthy.Store(true)

	// web loses its endpoints, cart is gone.
	s.Sync([]svcmanager.HealthCheck{{Namespace: "default", Name: "web", Port: p1}})
	if code, _, _, err := probe(p1); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("probe after the endpoints left: %d %v; want 503", code, err)
	}
	if _, _, _, err := probe(p2); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("probe of a port no service has: %v, want connection refused", err)
	}

	// A port in use: reported, then opened once it is free.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p2))
	if err != nil {
		t.Fatal(err)
	}
	checks := []svcmanager.HealthCheck{{Namespace: "default", Name: "web", Port: p1}, {Namespace: "shop", Name: "cart", Port: p2, LocalEndpoints: 1}}
	s.Sync(checks)
	if err := s.Failed(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("health-check NodePort %d", p2)) {
		t.Errorf("Failed = %v, want the port in use named", err)
	}
	ln.Close()
	s.Sync(checks)
	if code, _, _, err := probe(p2); err != nil || code != http.StatusOK || s.Failed() != nil {
		t.Errorf("probe once the port is free: %d %v (failed: %v)", code, err, s.Failed())
	}

	s.Close()
	if _, _, _, err := probe(p1); err == nil {
		t.Error("a port answers after Close")
	}
}
