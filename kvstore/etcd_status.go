package kvstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// statusChecker probes every endpoint and the quorum periodically and
// keeps the status line `apiary status` shows, in Cilium's format:
//
//	etcd: 1/1 connected, leases=1, lock leases=0, has-quorum=true: https://127.0.0.1:2379 - 3.7.3 (Leader)
type statusChecker struct {
	e   *etcdBackend
	tls *tls.Config

	mu              sync.Mutex
	status          Status
	quorumErrors    int
	connected       bool // an endpoint answered once since the start
	lastHeartbeat   time.Time
	heartbeatsSeen  bool
	consecutiveFail int
}

func newStatusChecker(e *etcdBackend, tlsCfg *tls.Config) *statusChecker {
	return &statusChecker{
		e:             e,
		tls:           tlsCfg,
		status:        Status{State: StateConnecting, Message: "etcd: connecting to " + strings.Join(e.opts.Config.Endpoints, ", ")},
		lastHeartbeat: time.Now(), // grace period: the writer may be about to write
	}
}

func (s *statusChecker) get() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *statusChecker) run(ctx context.Context) {
	if s.e.opts.HeartbeatTimeout > 0 {
		s.e.spawn(func() {
			for ev := range s.e.ListAndWatch(ctx, layout.HeartbeatKey) {
				if ev.Key == layout.HeartbeatKey && (ev.Type == EventCreate || ev.Type == EventModify) {
					s.mu.Lock()
					s.lastHeartbeat, s.heartbeatsSeen = time.Now(), true
					s.mu.Unlock()
				}
			}
		})
	}
	for {
		s.probe(ctx)
		if !job.Sleep(ctx, s.e.opts.StatusInterval) {
			return
		}
	}
}

func (s *statusChecker) probe(ctx context.Context) {
	timeout := min(s.e.opts.ConnectivityTimeout, 5*time.Second)
	var lines, failures []string
	ok := 0
	for _, ep := range s.e.opts.Config.Endpoints {
		line, err := s.probeEndpoint(ctx, ep, timeout)
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		ok++
		lines = append(lines, line)
	}
	// With no endpoint answering, the quorum check would only wait out
	// its timeout too and delay the Failure line by as much.
	quorumErr := errors.New("no endpoint answered")
	if ok > 0 {
		quorumErr = s.checkQuorum(ctx, timeout)
	}
	if ctx.Err() != nil {
		return
	}
	if s.update(ok, lines, failures, quorumErr) && s.e.opts.OnStatusChange != nil {
		s.e.opts.OnStatusChange()
	}
}

// update records a check's outcome as the status and reports whether
// its state changed.
func (s *statusChecker) update(ok int, lines, failures []string, quorumErr error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.status.State
	if quorumErr != nil {
		s.quorumErrors++
		s.e.metrics.quorumError()
	} else {
		s.quorumErrors = 0
	}
	switch {
	case ok == 0 && !s.connected && s.consecutiveFail == 0:
		// The first check after the start: the client may still be
		// dialling. The next failed check is a Failure.
		s.consecutiveFail++
		s.status = Status{State: StateConnecting, Message: fmt.Sprintf(
			"etcd: connecting to %s (no endpoint answered the first check, next in %s): %s",
			strings.Join(s.e.opts.Config.Endpoints, ", "), s.e.opts.StatusInterval, strings.Join(failures, "; "))}
	case ok == 0:
		s.consecutiveFail++
		s.status = Status{State: StateFailure, Message: fmt.Sprintf(
			"not able to connect to any etcd endpoints (%d consecutive failed checks, next in %s): %s",
			s.consecutiveFail, s.e.opts.StatusInterval, strings.Join(failures, "; "))}
	case s.quorumErrors > 1:
		s.consecutiveFail++
		s.status = Status{State: StateFailure, Message: fmt.Sprintf(
			"quorum check failed %d times in a row (next in %s): %v", s.quorumErrors, s.e.opts.StatusInterval, quorumErr)}
	default:
		s.consecutiveFail, s.connected = 0, true
		quorum := "true"
		if quorumErr != nil {
			quorum = fmt.Sprintf("%v, consecutive-errors=%d", quorumErr, s.quorumErrors)
		}
		s.status = Status{State: StateOK, Message: fmt.Sprintf(
			"etcd: %d/%d connected, leases=%d, lock leases=%d, has-quorum=%s: %s",
			ok, len(s.e.opts.Config.Endpoints), s.e.leases.total(), s.e.locks.total(), quorum,
			strings.Join(append(lines, failures...), "; "))}
	}
	return s.status.State != before
}

// probeEndpoint asks one endpoint for its version and leadership.
func (s *statusChecker) probeEndpoint(ctx context.Context, ep string, timeout time.Duration) (string, error) {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m := s.e.hist.mark()
	st, err := s.e.client.Status(pctx, ep)
	if err == nil {
		s.e.hist.member(m, st)
	}
	if err != nil {
		if tlsErr := s.probeTLS(ctx, ep, timeout); tlsErr != nil {
			return "", fmt.Errorf("%s - TLS handshake failed: %w", ep, tlsErr)
		}
		return "", fmt.Errorf("%s - %w", ep, err)
	}
	line := fmt.Sprintf("%s - %s", ep, st.Version)
	if st.Header != nil && st.Header.MemberId == st.Leader {
		line += " (Leader)"
	}
	return line, nil
}

// probeTLS dials an https endpoint and runs the TLS handshake alone, so
// that a certificate problem is reported as such and not as a timeout.
func (s *statusChecker) probeTLS(ctx context.Context, ep string, timeout time.Duration) error {
	u, err := url.Parse(ep)
	if err != nil || u.Scheme != "https" || s.tls == nil {
		return nil
	}
	cfg := s.tls.Clone()
	cfg.ServerName = u.Hostname()
	cfg.NextProtos = []string{"h2"}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", u.Host)
	if err != nil {
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Op == "dial" {
			return nil // not a TLS problem: nothing listens there
		}
		return err
	}
	_ = conn.Close()
	return nil
}

// checkQuorum does a linearizable read and checks the heartbeat's age.
func (s *statusChecker) checkQuorum(ctx context.Context, timeout time.Duration) error {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m := s.e.hist.mark()
	resp, err := s.e.client.Get(qctx, layout.HeartbeatKey, clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("linearizable read failed: %w", err)
	}
	s.e.hist.linearizable(m, resp.Header)
	if s.e.opts.HeartbeatTimeout < 0 {
		return nil
	}
	s.mu.Lock()
	age := time.Since(s.lastHeartbeat)
	seen := s.heartbeatsSeen
	s.mu.Unlock()
	if age > s.e.opts.HeartbeatTimeout {
		if !seen {
			return fmt.Errorf("no heartbeat update received in %s (is a heartbeat writer running?)", age.Round(time.Second))
		}
		return fmt.Errorf("%s since last heartbeat update has been received", age.Round(time.Second))
	}
	return nil
}
