package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// keptCanaries are the canaries of the agents' own stores: the leader
// writes them again when they vanish after they existed. Its own are
// layout.CanaryIdentities, written at once (the identity allocator's keys
// are always complete), and layout.CanaryServices, unless the services
// writer writes it (with Kubernetes; without, an empty store is complete).
var keptCanaries = []string{layout.CanaryNodes, layout.CanaryIPCache}

// Options configure a Publisher.
type Options struct {
	// Backend is this agent's kvstore.
	Backend kvstore.Backend
	// Cluster is this cluster.
	Cluster cluster.Info
	// Log gets the leadership changes and failures.
	Log *slog.Logger
	// Resync is how often the leader checks every key even without a
	// change seen (default 1m).
	Resync time.Duration
	// Retry is the backoff after a failed write or lock attempt.
	Retry job.Backoff
	// OnLeadership, if set, is called when this agent becomes the
	// publisher (true) and when it stops being it (false).
	OnLeadership func(leader bool)
	// NoServicesCanary leaves the services canary to the writer of the
	// services (clustermesh/service/k8ssvc, with Kubernetes), which
	// writes it once they are written; without it the publisher writes
	// it at once (no services: an empty, complete set).
	NoServicesCanary bool
}

// Publisher writes and keeps this cluster's configuration and canaries
// while it holds the cluster's publisher lock.
type Publisher struct {
	opts   Options
	config []byte
	leader atomic.Bool

	mu   sync.Mutex
	seen map[string]bool // kept canaries seen since this agent leads

	stateMu sync.Mutex
	changed chan struct{} // closed at the next leadership change
}

// New returns a Publisher; Run starts it.
func New(opts Options) (*Publisher, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Resync <= 0 {
		opts.Resync = time.Minute
	}
	config, err := json.Marshal(opts.Cluster.CiliumClusterConfig())
	if err != nil {
		return nil, fmt.Errorf("encode cluster config: %w", err)
	}
	return &Publisher{opts: opts, config: config, seen: map[string]bool{}, changed: make(chan struct{})}, nil
}

// Leader reports whether this agent holds the lock and publishes.
func (p *Publisher) Leader() bool { return p.leader.Load() }

// ClusterConfig returns the JSON this agent writes when it leads.
func (p *Publisher) ClusterConfig() []byte { return slices.Clone(p.config) }

// Run waits for the lock, then writes and keeps the keys until ctx ends,
// when it releases the lock. The keys stay until this agent's session
// lease expires (as every key of a stopped agent does); the agent that
// takes the lock over binds the cluster config to its own lease at once
// and writes each canary again when the old one expires. When the lock
// is lost (its lease expired: etcd unreachable for longer than its TTL),
// Run stops writing, also a write in flight, and waits for the lock
// again.
func (p *Publisher) Run(ctx context.Context) {
	path := layout.PublisherLockKey(p.opts.Cluster.ClusterName)
	for failures := 0; ctx.Err() == nil; {
		lock, err := p.opts.Backend.LockPath(ctx, path)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			p.opts.Log.Warn("Unable to take the clustermesh publisher lock", "lock", path, "error", err)
			if !job.Sleep(ctx, p.opts.Retry.Duration(failures)) {
				return
			}
			continue
		}
		failures = 0
		var lost <-chan struct{}
		if w, ok := lock.(kvstore.LockWatcher); ok {
			lost = w.Lost()
		}
		p.lead(ctx, lost)
		p.release(lock)
		if ctx.Err() == nil {
			p.opts.Log.Warn("Lost the clustermesh publisher lock; waiting to take it again", "lock", path)
		}
	}
}

// release gives the lock up within a few seconds.
func (p *Publisher) release(lock kvstore.Unlocker) {
	p.setLeader(false)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := lock.Unlock(ctx); err != nil {
		p.opts.Log.Warn("Unable to release the clustermesh publisher lock", "error", err)
	}
}

// LeaderState reports whether this agent leads and returns a channel
// closed at the next change: the writers that only the publisher runs
// (the global services) start and stop with it.
func (p *Publisher) LeaderState() (bool, <-chan struct{}) {
	p.stateMu.Lock()
	defer p.stateMu.Unlock()
	return p.leader.Load(), p.changed
}

// setLeader records and reports the leadership.
func (p *Publisher) setLeader(leader bool) {
	p.stateMu.Lock()
	if p.leader.Swap(leader) == leader {
		p.stateMu.Unlock()
		return
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.stateMu.Unlock()
	if p.opts.OnLeadership != nil {
		p.opts.OnLeadership(leader)
	}
}

// lead writes the keys, then writes them again whenever the watch of
// them shows a change, a write failed, or Resync passed, until ctx ends
// or lost is closed (nil: never).
func (p *Publisher) lead(ctx context.Context, lost <-chan struct{}) {
	cluster := p.opts.Cluster.ClusterName
	p.mu.Lock()
	clear(p.seen)
	p.mu.Unlock()
	p.setLeader(true)
	p.opts.Log.Info("Publishing this cluster's configuration and sync canaries for remote clusters",
		"key", layout.ClusterConfigKey(cluster), "config", string(p.config))
	ctx, cancel := context.WithCancel(ctx)
	kick := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() { // a lost lock ends the writes in flight too
		select {
		case <-lost:
			cancel()
		case <-ctx.Done():
		}
	})
	wg.Go(func() { p.watch(ctx, layout.ClusterConfigKey(cluster), kick) })
	wg.Go(func() { p.watch(ctx, p.syncedPrefix(), kick) })

	for failures := 0; ; {
		wait := p.opts.Resync
		if err := p.reconcile(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			wait = p.opts.Retry.Duration(failures)
			p.opts.Log.Warn("Unable to publish the cluster configuration or a sync canary", "error", err)
		} else {
			failures = 0
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-kick:
		case <-timer.C:
		}
		timer.Stop()
	}
}

func (p *Publisher) syncedPrefix() string {
	return layout.SyncedClusterPrefix(p.opts.Cluster.ClusterName) + "/"
}

// watch kicks the writer on every change of a key under prefix, and
// records the kept canaries it sees.
func (p *Publisher) watch(ctx context.Context, prefix string, kick chan<- struct{}) {
	for ev := range p.opts.Backend.ListAndWatch(ctx, prefix) {
		if ev.Type == kvstore.EventCreate || ev.Type == kvstore.EventModify {
			name := strings.TrimPrefix(ev.Key, p.syncedPrefix())
			if slices.Contains(keptCanaries, name) {
				p.mu.Lock()
				p.seen[name] = true
				p.mu.Unlock()
			}
		}
		select {
		case kick <- struct{}{}:
		default:
		}
	}
}

// reconcile writes the cluster config if it differs (or is bound to
// another lease) and every canary that is missing.
func (p *Publisher) reconcile(ctx context.Context) error {
	b := p.opts.Backend
	if _, err := b.UpdateIfDifferent(ctx, layout.ClusterConfigKey(p.opts.Cluster.ClusterName), p.config, true); err != nil {
		return fmt.Errorf("write %s: %w", layout.ClusterConfigKey(p.opts.Cluster.ClusterName), err)
	}
	names := []string{layout.CanaryIdentities}
	if !p.opts.NoServicesCanary {
		names = append(names, layout.CanaryServices)
	}
	p.mu.Lock()
	for _, name := range keptCanaries {
		if p.seen[name] {
			names = append(names, name)
		}
	}
	p.mu.Unlock()
	for _, name := range names {
		key := p.syncedPrefix() + name
		v, err := b.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		if v != nil {
			continue
		}
		if err := b.Update(ctx, key, []byte(time.Now().UTC().Format(time.RFC3339)), true); err != nil {
			return fmt.Errorf("write %s: %w", key, err)
		}
		p.opts.Log.Info("Sync canary written", "key", key)
	}
	return nil
}
