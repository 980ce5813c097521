package healthserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// ProxyState is what the proxy health check answers from.
type ProxyState struct {
	// Healthy: the node's services are in the datapath (the initial
	// reconcile done, no write failing for long) and the agent is not
	// degraded.
	Healthy bool
	// Reason says why not, for the status line.
	Reason string
	// NodeEligible: the node is not being deleted (kube-proxy's
	// KEP-3836: no deletionTimestamp, no ToBeDeletedByClusterAutoscaler
	// taint).
	NodeEligible bool
}

// Proxy answers kube-proxy's own health check (its --healthz-bind-address,
// port 10256; Cilium's --kube-proxy-replacement-healthz-bind-address),
// which cloud load balancers probe on every node for Services with
// externalTrafficPolicy Cluster:
//
//	GET /healthz  200 when healthy and the node is eligible, else 503
//	GET /livez    200 when healthy, else 503 (the node's deletion aside)
//
// with kube-proxy's body,
//
//	{"lastUpdated": "<time>","currentTime": "<time>","nodeEligible": true}
//
// where lastUpdated is now while healthy, else the last time it was.
type Proxy struct {
	log   *slog.Logger
	addr  string
	state func() ProxyState
	now   func() time.Time

	mu          sync.Mutex
	lastHealthy time.Time // when a probe last found it healthy (start: the server's creation)
	srv         *serving  // nil: not listening
	err         error     // why addr could not be opened (nil: open, or not tried)
	closed      bool
}

// NewProxy returns the health check of state for addr (host:port); Open
// starts listening.
func NewProxy(log *slog.Logger, addr string, state func() ProxyState) *Proxy {
	return &Proxy{log: log, addr: addr, state: state, now: time.Now, lastHealthy: time.Now()}
}

// Addr is the address the check listens on.
func (p *Proxy) Addr() string { return p.addr }

// Open listens on the address unless it does already; the error (the
// address in use, or not on the node) is Failed's too, and the next
// Open tries again.
func (p *Proxy) Open() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.srv != nil {
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { p.answer(w, true) })
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) { p.answer(w, false) })
	srv, err := serve(p.log, p.addr, mux)
	if err != nil {
		if p.err == nil {
			p.log.Warn("Cannot open the kube-proxy health check (is kube-proxy still running?)", "address", p.addr, "error", err)
		}
		p.err = fmt.Errorf("kube-proxy health check %s: %w", p.addr, err)
		return p.err
	}
	p.srv, p.err = srv, nil
	p.log.Info("Serving the kube-proxy health check", "address", p.addr)
	return nil
}

// Failed returns why the last Open failed (nil: listening, or closed).
func (p *Proxy) Failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close stops listening; Open does nothing afterwards.
func (p *Proxy) Close() {
	p.mu.Lock()
	srv := p.srv
	p.closed, p.srv, p.err = true, nil, nil
	p.mu.Unlock()
	if srv != nil {
		srv.stop()
	}
}

// answer writes the check's answer: /healthz (eligible: the node's
// deletion counts) or /livez.
func (p *Proxy) answer(w http.ResponseWriter, eligible bool) {
	st, code, last, now := p.Check(eligible)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"lastUpdated": %q,"currentTime": %q,"nodeEligible": %v}`+"\n", last.String(), now.String(), st.NodeEligible)
}

// Check returns what /healthz (eligible) or /livez answers now: the
// state, the HTTP status, lastUpdated and currentTime (without the
// monotonic clock reading).
func (p *Proxy) Check(eligible bool) (st ProxyState, code int, lastUpdated, now time.Time) {
	st = p.state()
	now = p.now().Round(0)
	p.mu.Lock()
	if st.Healthy {
		p.lastHealthy = now
	}
	lastUpdated = p.lastHealthy.Round(0)
	p.mu.Unlock()
	code = http.StatusOK
	if !st.Healthy || eligible && !st.NodeEligible {
		code = http.StatusServiceUnavailable
	}
	return st, code, lastUpdated, now
}
