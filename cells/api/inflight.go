package api

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// SlowRequest is how long a request may run before the server logs it
// and the API status line names it: a handler blocked on something (a
// file, the kernel, a lock) shows, instead of the agent going quiet.
const SlowRequest = 10 * time.Second

// Requests are the requests the API server is serving (streaming ones
// aside). It depends on nothing but the config, so a status line may
// read it although the server depends on every handler.
type Requests interface {
	// InFlight returns the requests being served, oldest first.
	InFlight() []Request
	// SocketPath is the socket they come in on.
	SocketPath() string
}

// Request is a request being served.
type Request struct {
	Method, Path string
	Since        time.Time
}

// inflight tracks the requests being served by non-streaming handlers
// and gives each a deadline: --api-write-timeout, after which the client
// gets no answer anyway, so the handler's context ends then too and work
// a handler does under it stops rather than running for nobody.
type inflight struct {
	deadline time.Duration
	socket   string
	log      *slog.Logger

	mu   sync.Mutex
	next uint64
	reqs map[uint64]*tracked
}

type tracked struct {
	Request
	logged bool
}

var _ Requests = (*inflight)(nil)

func newInflightFromConfig(cfg Config, log *slog.Logger) *inflight {
	return &inflight{deadline: cfg.APIWriteTimeout, socket: cfg.SocketPath, log: log, reqs: map[uint64]*tracked{}}
}

// SocketPath implements Requests.
func (f *inflight) SocketPath() string { return f.socket }

// InFlight implements Requests.
func (f *inflight) InFlight() []Request { return f.list() }

// wrap tracks next's requests and runs them under the deadline.
func (f *inflight) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.next++
		id := f.next
		f.reqs[id] = &tracked{Request: Request{Method: r.Method, Path: r.URL.Path, Since: time.Now()}}
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			t := f.reqs[id]
			delete(f.reqs, id)
			f.mu.Unlock()
			if t.logged {
				f.log.Info("Slow API request done", "method", t.Method, "path", t.Path, "duration", time.Since(t.Since).Round(time.Millisecond))
			}
		}()
		if f.deadline > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), f.deadline)
			defer cancel()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// list returns the requests being served, oldest first.
func (f *inflight) list() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Request, 0, len(f.reqs))
	for _, t := range f.reqs {
		out = append(out, t.Request)
	}
	slices.SortFunc(out, func(a, b Request) int { return a.Since.Compare(b.Since) })
	return out
}

// logSlow logs, once each, the requests running longer than SlowRequest.
func (f *inflight) logSlow(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.reqs {
		if !t.logged && now.Sub(t.Since) > SlowRequest {
			t.logged = true
			f.log.Warn("API request running long (a handler may be blocked)", "method", t.Method, "path", t.Path,
				"running", now.Sub(t.Since).Round(time.Second))
		}
	}
}

// watch logs slow requests every second until stop is closed.
func (f *inflight) watch(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			f.logSlow(now)
		}
	}
}
