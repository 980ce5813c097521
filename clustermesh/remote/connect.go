package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// connection is one etcd client to the remote and the goroutines that
// use it.
type connection struct {
	backend kvstore.Backend
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// connect is the DoFunc of remote-etcd-<cluster>: it releases the old
// connection, creates a client, waits for the etcd to answer, reads and
// validates the cluster config and starts the watchers and the watchdog.
// Its errors name the phase that failed (dial, TLS, cluster config).
func (c *Cluster) connect(ctx context.Context) error {
	c.release()
	c.mu.Lock()
	cfg := c.etcdConfig
	c.state.status = "connecting to " + strings.Join(cfg.Endpoints, ", ")
	if c.state.lastError != "" {
		c.state.status += " (last attempt: " + c.state.lastError + ")"
	}
	c.mu.Unlock()
	b, err := kvstore.NewEtcdBackend(kvstore.EtcdOptions{
		Config: cfg, StatusInterval: c.p.Options.StatusInterval, HeartbeatTimeout: c.p.Options.HeartbeatTimeout,
		// Probes end well within ConnectTimeout, so a failed connection
		// is reported with the probe's words (dial, TLS), not a timeout.
		ConnectivityTimeout: c.p.Options.ConnectTimeout / 2, Logger: c.p.Log,
	})
	if err != nil {
		return c.fail(fmt.Errorf("tls: %w", err))
	}
	if err := c.waitConnected(ctx, b); err != nil {
		b.Close()
		if ctx.Err() != nil {
			return ctx.Err() // stopping or removed: not a failure of the remote
		}
		return c.fail(err)
	}
	ccfg, err := c.readClusterConfig(ctx, b)
	if err == nil {
		err = c.claim(ccfg)
	}
	if err != nil {
		b.Close()
		return c.fail(err)
	}
	c.start(b, ccfg)
	return nil
}

// waitConnected waits for the client's first good status probe; the
// error is the probe's own words (dial or TLS handshake failure).
func (c *Cluster) waitConnected(ctx context.Context, b kvstore.Backend) error {
	ctx, cancel := context.WithTimeout(ctx, c.p.Options.ConnectTimeout)
	defer cancel()
	// The status is a cached value the client's prober sets: reading it
	// often costs nothing, and a connection is ready as soon as the first
	// probe answers, not up to a tick later.
	tick := time.NewTicker(min(c.p.Options.StatusInterval, 10*time.Millisecond))
	defer tick.Stop()
	for {
		st := b.Status()
		if st.State == kvstore.StateOK {
			return nil
		}
		select {
		case <-ctx.Done():
			switch {
			case strings.Contains(st.Message, "TLS handshake failed"):
				return fmt.Errorf("tls: %s", st.Message)
			case strings.HasPrefix(st.Message, "etcd: connecting to"):
				return fmt.Errorf("dial: no answer within %s from %s", c.p.Options.ConnectTimeout, strings.Join(c.endpoints(), ", "))
			}
			return fmt.Errorf("dial: %s", st.Message)
		case <-tick.C:
		}
	}
}

// readClusterConfig waits (bounded by ConfigTimeout) for the remote's
// configuration (kvstore/layout's ClusterConfigKey) and validates it.
func (c *Cluster) readClusterConfig(ctx context.Context, b kvstore.Backend) (cluster.CiliumClusterConfig, error) {
	key := layout.ClusterConfigKey(c.p.Name)
	ctx, cancel := context.WithTimeout(ctx, c.p.Options.ConfigTimeout)
	defer cancel()
	c.setStatus("cluster config: waiting for " + key)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		data, err := b.Get(ctx, key)
		if err == nil && data != nil {
			cfg, err := cluster.ParseClusterConfig(key, data)
			if err != nil {
				return cfg, fmt.Errorf("cluster config: %w", err)
			}
			c.mu.Lock()
			c.state.config = configState{found: true, cfg: cfg}
			c.mu.Unlock()
			if err := c.p.Local.ValidateRemoteConfig(c.p.Name, cfg); err != nil {
				return cfg, fmt.Errorf("cluster config: %s: %w", key, err)
			}
			return cfg, nil
		}
		select {
		case <-ctx.Done():
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return cluster.CiliumClusterConfig{}, fmt.Errorf("cluster config: read %s: %w", key, err)
			}
			return cluster.CiliumClusterConfig{}, fmt.Errorf("cluster config: %s not found within %s (required)", key, c.p.Options.ConfigTimeout)
		case <-tick.C:
		}
	}
}

// claim takes the remote's cluster id; a remote using the id of another
// connected remote is refused.
func (c *Cluster) claim(cfg cluster.CiliumClusterConfig) error {
	if err := c.p.Claims.Claim(c.p.Name, cfg.ID); err != nil {
		return fmt.Errorf("cluster config: %w", err)
	}
	return nil
}

// start builds (or reuses) the watchers and runs them on b, with the
// watchdog.
func (c *Cluster) start(b kvstore.Backend, cfg cluster.CiliumClusterConfig) {
	c.mu.Lock()
	old, oldID := c.watchers, c.clusterID
	changed := old != nil && (oldID != cfg.ID || old.layout.cached != cfg.Capabilities.Cached)
	if changed {
		c.watchers = nil // the id or layout changed: what the old one brought goes first
	}
	c.mu.Unlock()
	if changed {
		c.p.Log.Warn("Cluster id or layout changed, withdrawing what the old one brought",
			"old-id", oldID, "new-id", cfg.ID, "cached", cfg.Capabilities.Cached)
		old.drain()
	}
	c.mu.Lock()
	if c.watchers == nil {
		c.watchers = newWatchers(c.p, c.p.Local.Remote(c.p.Name, cfg.ID), newPrefixes(c.p.Name, cfg.Capabilities.Cached), c.onSynced)
		c.clusterID = cfg.ID
	}
	w := c.watchers
	ctx, cancel := context.WithCancel(context.Background())
	conn := &connection{backend: b, cancel: cancel}
	c.conn = conn
	c.state.connected = true
	c.state.status = "connected, waiting for the first list"
	c.mu.Unlock()
	mode := "sync-canary"
	if !cfg.Capabilities.SyncedCanaries {
		mode = "immediate"
	}
	c.p.Log.Info("Connected to remote cluster", "cluster-id", cfg.ID, "mode", mode)
	conn.wg.Go(func() { w.run(ctx, b, c.p.Name, cfg.Capabilities.SyncedCanaries, c.p.Log) })
	conn.wg.Go(func() { c.watchdog(ctx, b) })
	c.notify()
}

// watchdog restarts the connection when the client's status probes fail
// WatchdogFailures times in a row (session lost, heartbeat stale, etcd
// gone); the controller's next run releases this connection first.
func (c *Cluster) watchdog(ctx context.Context, b kvstore.Backend) {
	tick := time.NewTicker(c.p.Options.StatusInterval)
	defer tick.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		st := b.Status()
		if st.State == kvstore.StateOK {
			failures = 0
			continue
		}
		failures++
		if failures >= c.p.Options.WatchdogFailures {
			c.p.Log.Warn("Remote etcd connection unhealthy, restarting it", "status", st.Message)
			c.mu.Lock()
			c.recordFailureLocked(fmt.Errorf("watchdog: %s", st.Message))
			c.mu.Unlock()
			c.p.Controllers.Trigger(c.name)
			return
		}
	}
}

// release stops the goroutines of the current connection and closes its
// client; entries learned stay.
func (c *Cluster) release() {
	c.mu.Lock()
	conn := c.conn
	c.conn = nil
	c.state.connected = false
	c.mu.Unlock()
	if conn == nil {
		return
	}
	conn.cancel()
	conn.wg.Wait()
	conn.backend.Close()
	c.p.Claims.Release(c.p.Name)
	c.notify()
}

func (c *Cluster) onSynced() {
	c.mu.Lock()
	if c.conn != nil {
		c.state.status = "ready"
	}
	c.mu.Unlock()
	select {
	case <-c.synced:
	default:
		close(c.synced)
	}
	c.p.Log.Info("Remote cluster ready: every prefix synced")
	c.notify()
}

func (c *Cluster) setStatus(s string) {
	c.mu.Lock()
	c.state.status = s
	c.mu.Unlock()
}

// fail records a failed attempt and returns err for the controller.
func (c *Cluster) fail(err error) error {
	c.mu.Lock()
	c.recordFailureLocked(err)
	c.mu.Unlock()
	c.p.Log.Warn("Unable to connect to remote cluster", "error", err)
	c.notify()
	return err
}

func (c *Cluster) recordFailureLocked(err error) {
	c.state.failures++
	c.state.lastFailure = time.Now()
	c.state.lastError = err.Error()
	c.state.status = err.Error()
}

func (c *Cluster) endpoints() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.etcdConfig.Endpoints
}
