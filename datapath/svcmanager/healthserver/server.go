// Package healthserver answers the health-check NodePorts of
// LoadBalancer Services with externalTrafficPolicy Local, as kube-proxy
// and Cilium (--enable-health-check-nodeport) do: the cloud load balancer
// probes every node on the Service's spec.healthCheckNodePort and sends
// the Service's traffic only to the nodes that answer 200, those with a
// ready endpoint of the Service (the datapath drops that traffic on the
// others: its Local frontends have no backend there).
//
// Each port answers any HTTP request with 200 (local endpoints, and the
// node's service proxy healthy: WithProxyHealth) or 503 and kube-proxy's
// JSON body:
//
//	{"service":{"namespace":"default","name":"web"},"localEndpoints":1,"serviceProxyHealthy":true}
//
// Proxy answers kube-proxy's own health check (/healthz, /livez).
//
// It may import packages of cells, kvstore, policy and datapath
// (docs/design.md, Layers).
package healthserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// Server holds one listener per health-check NodePort.
type Server struct {
	log     *slog.Logger
	addr    string      // host to listen on ("": every address)
	healthy func() bool // the service proxy's health (serviceProxyHealthy)

	mu     sync.Mutex
	ports  map[uint16]*port
	failed map[uint16]error // ports that could not be opened, by port
	closed bool
}

// port is one listener and the check it answers.
type port struct {
	*serving
	healthy func() bool // the server's
	check   atomic.Pointer[svcmanager.HealthCheck]
}

// New returns a server listening on host (empty: every address of the
// node) once Sync gives it ports.
func New(log *slog.Logger, host string) *Server {
	return &Server{log: log, addr: host, healthy: func() bool { return true }, ports: map[uint16]*port{}, failed: map[uint16]error{}}
}

// WithProxyHealth makes the ports answer 503, serviceProxyHealthy
// false, while healthy says the node's service proxy is not (kube-proxy
// answers so while it is unhealthy, whatever the endpoints); call it
// before the first Sync.
func (s *Server) WithProxyHealth(healthy func() bool) *Server {
	s.healthy = healthy
	return s
}

// Sync makes the server answer exactly checks: it opens the ports that
// are new, closes those no check has any more and answers the others'
// probes with their new counts at once. A port two checks give is the
// first's (Kubernetes allocates each once). A port that cannot be opened
// is reported by Failed and tried again on the next Sync.
func (s *Server) Sync(checks []svcmanager.HealthCheck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	want := map[uint16]svcmanager.HealthCheck{}
	for _, c := range checks {
		if _, dup := want[c.Port]; !dup && c.Port != 0 {
			want[c.Port] = c
		}
	}
	for n, p := range s.ports {
		if _, ok := want[n]; !ok {
			p.stop()
			delete(s.ports, n)
			s.log.Info("Closed health-check NodePort", "port", n)
		}
	}
	clear(s.failed)
	for n, c := range want {
		if p := s.ports[n]; p != nil {
			p.check.Store(&c)
			continue
		}
		p, err := s.open(n, c)
		if err != nil {
			s.failed[n] = err
			s.log.Warn("Cannot open a health-check NodePort", "port", n, "service", c.Namespace+"/"+c.Name, "error", err)
			continue
		}
		s.ports[n] = p
		s.log.Info("Opened health-check NodePort", "port", n, "service", c.Namespace+"/"+c.Name, "localEndpoints", c.LocalEndpoints)
	}
}

// open listens on port n and serves check c there.
func (s *Server) open(n uint16, c svcmanager.HealthCheck) (*port, error) {
	p := &port{healthy: s.healthy}
	p.check.Store(&c)
	var err error
	if p.serving, err = serve(s.log, net.JoinHostPort(s.addr, strconv.Itoa(int(n))), p); err != nil {
		return nil, err
	}
	return p, nil
}

// body is kube-proxy's answer.
type body struct {
	Service struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"service"`
	LocalEndpoints      int  `json:"localEndpoints"`
	ServiceProxyHealthy bool `json:"serviceProxyHealthy"`
}

// ServeHTTP answers a probe, whatever its path and method.
func (p *port) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	c := p.check.Load()
	var b body
	b.Service.Namespace, b.Service.Name = c.Namespace, c.Name
	b.LocalEndpoints, b.ServiceProxyHealthy = c.LocalEndpoints, p.healthy()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Load-Balancing-Endpoint-Weight", strconv.Itoa(c.LocalEndpoints))
	if c.LocalEndpoints > 0 && b.ServiceProxyHealthy {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(b)
}

// Ports returns how many ports are open.
func (s *Server) Ports() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ports)
}

// Failed returns why the ports the last Sync could not open failed
// (none: nil).
func (s *Server) Failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(s.failed)) {
		errs = append(errs, fmt.Errorf("health-check NodePort %d: %w", n, s.failed[n]))
	}
	return errors.Join(errs...)
}

// Close closes every port; Sync does nothing afterwards.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for n, p := range s.ports {
		p.stop()
		delete(s.ports, n)
	}
}
