package hubblecell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cells/version"
	"github.com/apiary-net/apiary/datapath/hubble"
	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	"github.com/apiary-net/apiary/datapath/hubble/api/peer"
	"github.com/apiary-net/apiary/datapath/maps/metricsmap"
	"github.com/apiary-net/apiary/datapath/monitor"
)

// subscriptionBuffer is how many events the observer may be behind the
// monitor's reader before it loses some (counted as lost events).
const subscriptionBuffer = 8192

// healthServiceName is the service name Hubble's health check asks
// about (Cilium's v1.ObserverServiceName).
const healthServiceName = "hubble.server.Observer"

// server is the running observer.
type server struct {
	cfg         Config
	log         *slog.Logger
	monitor     monitor.Subscriber
	ring        *hubble.Ring
	parser      *hubble.Parser
	observer    *hubble.Observer
	peers       *hubble.Peers
	metricNames []hubble.Metric

	sub     *monitor.Subscription
	grpcs   []*grpc.Server // one per listener: the socket's, and the TCP one (TLS)
	health  *health.Server
	metrics *http.Server
	wg      sync.WaitGroup
	stopped chan struct{}
	lost    uint64 // events the subscription lost (read by statusReport under mu)
	// kernelLost counts the records the programs could not write (under
	// mu); bpfRoot locates the metrics map that counts them ("" without
	// the BPF loader).
	kernelLost uint64
	bpfRoot    string
	mu         sync.Mutex
	// revNATs resolves the services of translated packets (nil without
	// the service manager or the BPF loader).
	revNATs *revNATMaps
}

func versionString() string { return version.Get().String() }

func (s *server) start(cell.HookContext) error {
	var fm *hubble.FlowMetrics
	var reg *prometheus.Registry
	if len(s.metricNames) > 0 {
		reg = prometheus.NewRegistry()
		var err error
		if fm, err = hubble.NewFlowMetrics(reg, s.metricNames); err != nil {
			return err
		}
	}
	types := monitor.Types{Drop: true, Trace: true}
	types.PolicyVerdict = slices.Contains(s.metricNames, hubble.MetricPolicy)
	sub, err := s.monitor.Subscribe(types, subscriptionBuffer)
	if err != nil {
		return fmt.Errorf("subscribe to the datapath monitor: %w", err)
	}
	listeners, err := s.listen()
	if err != nil {
		sub.Close()
		return err
	}
	if s.revNATs != nil {
		s.revNATs.open()
	}
	s.sub, s.stopped = sub, make(chan struct{})
	s.observer.Started = time.Now()
	s.health = health.NewServer() // `hubble status` checks it first
	s.health.SetServingStatus(healthServiceName, healthpb.HealthCheckResponse_SERVING)
	for _, l := range listeners {
		srv := grpc.NewServer(l.opts...)
		observer.RegisterObserverServer(srv, s.observer)
		peer.RegisterPeerServer(srv, s.peers)
		healthpb.RegisterHealthServer(srv, s.health)
		s.grpcs = append(s.grpcs, srv)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := srv.Serve(l.l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				s.log.Error("Hubble API server failed", "address", l.l.Addr().String(), "error", err)
			}
		}()
	}
	if reg != nil {
		if err := s.serveMetrics(reg); err != nil {
			for _, srv := range s.grpcs {
				srv.Stop()
			}
			sub.Close()
			s.wg.Wait()
			if s.revNATs != nil {
				_ = s.revNATs.close()
			}
			return err
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.consume(fm)
	}()
	if s.bpfRoot != "" {
		m, err := metricsmap.Open(s.log, s.bpfRoot)
		if err != nil {
			s.log.Warn("Cannot open the BPF metrics map: lost datapath events are not reported", "error", err)
		} else {
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer m.Close()
				s.watchKernelLost(m)
			}()
		}
	}
	s.log.Info("Hubble observer listening", "socket", s.cfg.HubbleSocketPath, "address", s.cfg.HubbleListenAddress,
		"buffer", s.ring.Capacity())
	return nil
}

// listener is a listener and the options of the gRPC server on it.
type listener struct {
	l    net.Listener
	opts []grpc.ServerOption
}

// listen opens the unix socket (replacing a stale one) and the TCP
// listener, with TLS unless --hubble-disable-tls.
func (s *server) listen() ([]listener, error) {
	var tcpOpts []grpc.ServerOption
	if servesTLS(s.cfg) {
		tc, err := serverTLS(s.cfg)
		if err != nil {
			return nil, err
		}
		tcpOpts = append(tcpOpts, grpc.Creds(credentials.NewTLS(tc)))
	}
	path := s.cfg.HubbleSocketPath
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("--hubble-socket-path: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--hubble-socket-path: remove stale socket: %w", err)
	}
	ul, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("--hubble-socket-path: %w", err)
	}
	ls := []listener{{l: ul}}
	if a := s.cfg.HubbleListenAddress; a != "" {
		tl, err := net.Listen("tcp", a)
		if err != nil {
			ul.Close()
			return nil, fmt.Errorf("--hubble-listen-address: %w", err)
		}
		ls = append(ls, listener{l: tl, opts: tcpOpts})
	}
	return ls, nil
}

func (s *server) serveMetrics(reg *prometheus.Registry) error {
	l, err := net.Listen("tcp", s.cfg.HubbleMetricsServer)
	if err != nil {
		return fmt.Errorf("--hubble-metrics-server: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.metrics.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("Hubble metrics server failed", "address", l.Addr().String(), "error", err)
		}
	}()
	return nil
}

// consume turns the subscription's events into flows until it ends.
func (s *server) consume(fm *hubble.FlowMetrics) {
	for {
		select {
		case <-s.stopped:
			return
		case <-s.sub.Done():
			return
		case <-s.sub.Lost():
			if n := s.sub.TakeLost(); n > 0 {
				s.addLost(n)
			}
		case ev := <-s.sub.Events():
			if n := s.sub.TakeLost(); n > 0 {
				s.addLost(n)
			}
			f, err := s.parser.Decode(ev)
			if err != nil {
				s.log.Debug("Skipping a datapath event", "error", err)
				continue
			}
			s.ring.Write(hubble.Entry{Flow: f})
			if fm != nil {
				fm.Observe(f)
			}
		}
	}
}

func (s *server) addLost(n uint64) {
	s.mu.Lock()
	s.lost += n
	s.mu.Unlock()
	s.ring.Write(hubble.Entry{Lost: n, LostSource: flow.LostEventSource_OBSERVER_EVENTS_QUEUE})
}

func (s *server) stop(ctx cell.HookContext) error {
	close(s.stopped)
	s.sub.Close()
	s.ring.Stop()  // ends the followers
	s.peers.Stop() // ends the Notify streams
	s.health.Shutdown()
	var stops sync.WaitGroup
	for _, srv := range s.grpcs {
		stops.Go(func() {
			done := make(chan struct{})
			go func() {
				srv.GracefulStop()
				close(done)
			}()
			select {
			case <-done:
			case <-ctx.Done():
				srv.Stop()
				<-done
			}
		})
	}
	stops.Wait()
	var err error
	if s.metrics != nil {
		err = s.metrics.Shutdown(ctx)
	}
	s.wg.Wait()
	if s.revNATs != nil {
		err = errors.Join(err, s.revNATs.close())
	}
	if rmErr := os.Remove(s.cfg.HubbleSocketPath); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}

// statusReport is the Hubble line of apiary status.
func (s *server) statusReport(ctx context.Context) status.Report {
	if !s.cfg.EnableHubble {
		return status.Report{State: status.Disabled, Message: "--enable-hubble is false"}
	}
	if len(s.grpcs) == 0 {
		return status.Report{State: status.Warning, Message: "Not started"}
	}
	if s.bpfRoot == "" {
		return status.Report{State: status.Warning, Message: "No BPF datapath in this agent: the API serves no flows, on " + s.cfg.HubbleSocketPath}
	}
	held, seen := s.ring.Counts()
	s.mu.Lock()
	lost, kernelLost := s.lost, s.kernelLost
	s.mu.Unlock()
	msg := fmt.Sprintf("Current/Max Flows: %d/%d, %d seen, lost %d in the datapath's ring buffer and %d in the observer's queue, on %s",
		held, s.ring.Capacity(), seen, kernelLost, lost, s.cfg.HubbleSocketPath)
	if s.cfg.HubbleListenAddress != "" {
		msg += " and " + s.cfg.HubbleListenAddress
	}
	return status.Report{State: status.Ok, Message: msg}
}
