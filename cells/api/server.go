package api

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
)

// Server is the REST API server of the agent.
type Server interface {
	// SocketPath returns the unix socket the API listens on.
	SocketPath() string
	// Patterns returns the ServeMux patterns of every endpoint, sorted.
	Patterns() []string
	// Handler returns the handler of every endpoint, with the JSON
	// errors but without the socket's connection limits and deadlines:
	// for tests that serve requests in-process (the API fuzz target).
	Handler() http.Handler
}

// maxHeaderBytes bounds the request line and headers of one request.
const maxHeaderBytes = 64 << 10

type serverParams struct {
	cell.In

	Config         Config
	Lifecycle      cell.Lifecycle
	Logger         *slog.Logger
	Health         cell.Health
	HealthReporter cell.HealthReporter
	Modules        cell.ModuleLister
	Hooks          cell.HookLister
	Timings        cell.PhaseTimer
	Controllers    controller.Registry `optional:"true"`
	Inflight       *inflight
	Handlers       []Handler `group:"api-handlers"`
}

type server struct {
	cfg      Config
	path     string
	log      *slog.Logger
	health   cell.Health
	handler  http.Handler
	patterns []string

	http     *http.Server
	limiter  *connLimiter
	track    *inflight
	stopSlow chan struct{}
	slowDone chan struct{}
	done     chan struct{}
	file     os.FileInfo
	stopping atomic.Bool // Stop closes the listener before the server
}

var (
	_ Server             = (*server)(nil)
	_ cell.HookInterface = (*server)(nil)
)

// newServer registers the built-in and the provided handlers; it fails
// on invalid or duplicate handlers.
func newServer(p serverParams) (Server, error) {
	b := &builtins{ctrls: p.Controllers, health: p.HealthReporter, modules: p.Modules, hooks: p.Hooks, timings: p.Timings}
	// Value groups come in random order: sort for stable error messages.
	provided := slices.Clone(p.Handlers)
	slices.SortStableFunc(provided, func(a, b Handler) int {
		return cmp.Or(strings.Compare(a.Pattern(), b.Pattern()), strings.Compare(a.owner(), b.owner()))
	})
	handlers := append(b.handlers(), provided...)
	track := p.Inflight
	mux, err := newMux(handlers, track)
	if err != nil {
		return nil, err
	}
	s := &server{
		cfg:     p.Config,
		path:    p.Config.SocketPath,
		log:     p.Logger,
		health:  p.Health,
		handler: jsonErrors{mux: mux, log: p.Logger},
		track:   track,
	}
	for _, h := range handlers {
		s.patterns = append(s.patterns, h.Pattern())
	}
	slices.Sort(s.patterns)
	p.Lifecycle.Append(s)
	return s, nil
}

func (s *server) SocketPath() string { return s.path }

func (s *server) Patterns() []string { return slices.Clone(s.patterns) }

func (s *server) Handler() http.Handler { return s.handler }

// Start listens on the socket and serves in a goroutine.
func (s *server) Start(ctx cell.HookContext) error {
	l, err := listenUnix(ctx, s.path)
	if err != nil {
		return err
	}
	l.SetUnlinkOnClose(true)
	s.file, _ = os.Lstat(s.path)
	s.limiter = newConnLimiter(l, s.cfg.APIMaxConnections, s.log)
	s.http = &http.Server{
		Handler:           requestLimits{next: s.handler, timeout: s.cfg.APIReadBodyTimeout},
		ReadHeaderTimeout: s.cfg.APIReadHeaderTimeout,
		WriteTimeout:      s.cfg.APIWriteTimeout,
		IdleTimeout:       s.cfg.APIIdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnState:         connState,
		ConnContext:       connContext,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.done = make(chan struct{})
	go s.serve(s.limiter)
	s.stopSlow, s.slowDone = make(chan struct{}), make(chan struct{})
	go s.track.watch(s.stopSlow, s.slowDone)
	s.log.Info("Serving the REST API", "socket", s.path, "endpoints", len(s.patterns),
		"max-connections", s.cfg.APIMaxConnections, "read-body-timeout", s.cfg.APIReadBodyTimeout, "write-timeout", s.cfg.APIWriteTimeout)
	s.health.OK("listening on " + s.path)
	return nil
}

func (s *server) serve(l net.Listener) {
	defer close(s.done)
	err := s.http.Serve(l)
	if errors.Is(err, http.ErrServerClosed) || s.stopping.Load() && errors.Is(err, net.ErrClosed) {
		return
	}
	s.log.Error("REST API server failed", "socket", s.path, "error", err)
	s.health.Degraded("serving failed", err)
}

// Stop stops accepting, closes the connections that wait on their
// client, lets the requests being served finish within ctx (then closes
// the remaining connections), waits for the serving goroutine and
// removes the socket file.
func (s *server) Stop(ctx cell.HookContext) error {
	var errs []error
	s.stopping.Store(true)
	if err := s.limiter.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close REST API socket: %w", err))
	}
	s.limiter.closeStalled()
	if err := s.http.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("shut down REST API server: %w", err))
		s.http.Close()
	}
	<-s.done
	close(s.stopSlow)
	<-s.slowDone
	if info, err := os.Lstat(s.path); err == nil && s.file != nil && os.SameFile(info, s.file) {
		if err := os.Remove(s.path); err != nil {
			errs = append(errs, fmt.Errorf("remove socket %s: %w", s.path, err))
		}
	}
	s.health.Stopped("stopped")
	return errors.Join(errs...)
}
