package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
)

// Server serves the registry on /metrics when --prometheus-serve-addr is
// set.
type Server interface {
	// Addr returns the address metrics are served on (with the real port
	// when the flag asked for port 0), or "" when serving is off or the
	// hive has not started.
	Addr() string
}

type serverParams struct {
	cell.In

	Config    Config
	Lifecycle cell.Lifecycle
	Logger    *slog.Logger
	Health    cell.Health
	Registry  Registry
}

type server struct {
	cfg      Config
	log      *slog.Logger
	health   cell.Health
	registry Registry

	mu   sync.Mutex
	addr string
	http *http.Server
	done chan struct{}
}

var (
	_ Server             = (*server)(nil)
	_ cell.HookInterface = (*server)(nil)
)

func newServer(p serverParams) Server {
	s := &server{cfg: p.Config, log: p.Logger, health: p.Health, registry: p.Registry}
	p.Lifecycle.Append(s)
	return s
}

func (s *server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Start listens on the configured address and serves /metrics.
func (s *server) Start(ctx cell.HookContext) error {
	if s.cfg.PrometheusServeAddr == "" {
		s.health.Stopped("disabled: --prometheus-serve-addr is empty")
		return nil
	}
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.cfg.PrometheusServeAddr)
	if err != nil {
		return fmt.Errorf("listen on --prometheus-serve-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		Registry: s.registry,
	}))
	s.mu.Lock()
	s.addr = l.Addr().String()
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	s.mu.Unlock()
	go s.serve(l)
	s.log.Info("Serving Prometheus metrics", "address", s.addr)
	s.health.OK("serving /metrics on " + s.addr)
	return nil
}

func (s *server) serve(l net.Listener) {
	defer close(s.done)
	if err := s.http.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		s.log.Error("Prometheus metrics server failed", "address", s.addr, "error", err)
		s.health.Degraded("serving /metrics failed", err)
	}
}

// Stop shuts the server down and waits for it.
func (s *server) Stop(ctx cell.HookContext) error {
	if s.http == nil {
		return nil
	}
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
		err = fmt.Errorf("shut down metrics server: %w", err)
	}
	<-s.done
	s.mu.Lock()
	s.addr = ""
	s.mu.Unlock()
	return err
}

// newStatusProvider reports the "Metrics" line.
func newStatusProvider(module cell.FullModuleID, cfg Config, s Server) status.ProviderOut {
	return status.NewProviderOut(module, "Metrics", func(context.Context) status.Report {
		switch addr := s.Addr(); {
		case cfg.PrometheusServeAddr == "":
			return status.Report{State: status.Disabled, Message: "--prometheus-serve-addr is empty"}
		case addr == "":
			return status.Report{State: status.Failure, Message: "not serving on " + cfg.PrometheusServeAddr}
		default:
			return status.Report{State: status.Ok, Message: "serving /metrics on " + addr}
		}
	})
}
