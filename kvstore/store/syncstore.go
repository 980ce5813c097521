package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// SyncStore writes this agent's keys under a prefix and defends them.
//
// Upserts and deletes go through a queue that coalesces changes of the
// same key and writes them in batches (one etcd transaction of up to
// kvstore.MaxBatchOps keys, several batches in flight); a key is never in
// two writes at once, so a later change never overtakes an earlier one. A
// batch etcd refuses is written again key by key, so one bad key does not
// hold the others back; failed keys are retried with backoff.
//
// Keys it owns are written again when another writer deletes or changes
// them: it watches its prefix (or is told about it by a WatchStore created
// WithWriter) and compares every local key on the periodic sync. Two
// writers fighting over a key back off from each other; conflicts are
// counted, logged and reported (Conflicts, WithOnConflict).
//
// Once Synced has been called and every change queued before it is
// written, the sync canary layout.SyncedKey(cluster, prefix) is written
// (RFC 3339 time), so readers in "sync" mode know the prefix is complete.
type SyncStore struct {
	backend    kvstore.Backend
	prefix     string // with trailing slash
	canaryKey  string
	syncedKey  string // the canary's name below layout.SyncedClusterPrefix; the prefix unless WithSyncedKey
	lease      bool
	log        *slog.Logger
	metrics    *Metrics
	queueSize  prometheus.Gauge
	scope      string
	retry      job.Backoff
	conflict   job.Backoff
	periodic   time.Duration
	workers    int
	maxOps     int
	maxBytes   int
	onConflict func(Conflict)

	mu         sync.Mutex
	wake       chan struct{}
	keys       map[string]*keyState // every key with an op, a local value or a conflict
	active     map[string]*keyState // keys with a queued or in-flight op
	conflicted map[string]*keyState // keys with a recent conflict
	queue      opQueue
	seq        uint64
	syncSeq    uint64 // 0: Synced not called yet
	syncFns    []func(context.Context)
	synced     bool
	fedByWatch bool // a WatchStore hands this store its events
}

// canaryName is the queue name of the canary write; it cannot clash with a
// key name, which never starts with a NUL byte.
const canaryName = "\x00canary"

// SyncStoreOption configures a SyncStore.
type SyncStoreOption func(*SyncStore)

// WithoutLease writes keys that outlive the agent (not bound to the
// session lease).
func WithoutLease() SyncStoreOption { return func(s *SyncStore) { s.lease = false } }

// WithSyncedKey names the sync canary layout.SyncedKey(cluster, key)
// instead of layout.SyncedKey(cluster, prefix). Cilium's readers wait for
// the ipcache canary at layout.CanaryIPCache (its writers' prefix is
// layout.IPDefaultPrefix) and for the identities canary at
// layout.CanaryIdentities (prefix layout.IdentitiesIDPrefix).
func WithSyncedKey(key string) SyncStoreOption {
	return func(s *SyncStore) { s.syncedKey = strings.Trim(key, "/") }
}

// WithSyncLogger sets the logger.
func WithSyncLogger(log *slog.Logger) SyncStoreOption { return func(s *SyncStore) { s.log = log } }

// WithSyncMetrics sets the metrics.
func WithSyncMetrics(m *Metrics) SyncStoreOption { return func(s *SyncStore) { s.metrics = m } }

// WithRetryBackoff sets the backoff of failed writes: minWait doubling up
// to maxWait, with jitter (default 100ms to 30s).
func WithRetryBackoff(minWait, maxWait time.Duration) SyncStoreOption {
	return func(s *SyncStore) { s.retry = job.Backoff{Min: minWait, Max: maxWait, Factor: 2} }
}

// WithWorkers sets how many write requests may be in flight at once
// (default 32; a key is never in two at once).
func WithWorkers(n int) SyncStoreOption {
	return func(s *SyncStore) { s.workers = max(1, n) }
}

// WithMaxBatch bounds one write request: at most ops keys (default and
// at most kvstore.MaxBatchOps) and about bytes of keys and values
// (default 512 KiB; a key larger than that is written alone).
func WithMaxBatch(ops, bytes int) SyncStoreOption {
	return func(s *SyncStore) {
		s.maxOps = min(max(1, ops), kvstore.MaxBatchOps)
		s.maxBytes = max(1, bytes)
	}
}

// WithPeriodicSync sets how often every local key is compared with the
// kvstore and written again if it differs (--kvstore-periodic-sync;
// default 5m).
func WithPeriodicSync(interval time.Duration) SyncStoreOption {
	return func(s *SyncStore) {
		if interval > 0 {
			s.periodic = interval
		}
	}
}

// WithConflictBackoff sets how long the store waits before it writes a
// key again after another writer changed it again: minWait after the
// second conflict in a row, doubling up to maxWait, with jitter (default
// 1s to 5m).
// The first repair is immediate; a key quiet for twice maxWait starts
// over.
func WithConflictBackoff(minWait, maxWait time.Duration) SyncStoreOption {
	return func(s *SyncStore) { s.conflict = job.Backoff{Min: minWait, Max: maxWait, Factor: 2} }
}

// WithOnConflict sets a function told about every conflict, from the
// store's goroutines; it must not block.
func WithOnConflict(fn func(Conflict)) SyncStoreOption {
	return func(s *SyncStore) { s.onConflict = fn }
}

// NewSyncStore creates a writer for prefix of cluster.
func NewSyncStore(cluster string, backend kvstore.Backend, prefix string, opts ...SyncStoreOption) *SyncStore {
	prefix = dirPrefix(prefix)
	s := &SyncStore{
		backend:    backend,
		prefix:     prefix,
		syncedKey:  strings.TrimSuffix(prefix, "/"),
		lease:      true,
		log:        slog.New(slog.DiscardHandler),
		scope:      strings.TrimSuffix(prefix, "/"),
		retry:      job.Backoff{Min: 100 * time.Millisecond, Max: 30 * time.Second, Factor: 2},
		conflict:   job.Backoff{Min: time.Second, Max: 5 * time.Minute, Factor: 2},
		periodic:   5 * time.Minute,
		workers:    32,
		maxOps:     kvstore.MaxBatchOps,
		maxBytes:   512 << 10,
		wake:       make(chan struct{}, 1),
		keys:       map[string]*keyState{},
		active:     map[string]*keyState{},
		conflicted: map[string]*keyState{},
	}
	for _, o := range opts {
		o(s)
	}
	s.canaryKey = layout.SyncedKey(cluster, s.syncedKey)
	s.metrics = metricsOrDefault(s.metrics)
	s.metrics.Synced.WithLabelValues(s.scope, "write").Set(0)
	s.queueSize = s.metrics.QueueSize.WithLabelValues(s.scope)
	return s
}

// CanaryKey returns the key of the sync canary.
func (s *SyncStore) CanaryKey() string { return s.canaryKey }

// UpsertKey queues a write of k.
func (s *SyncStore) UpsertKey(_ context.Context, k LocalKey) error {
	value, err := k.Marshal()
	if err != nil {
		return fmt.Errorf("marshal %s%s: %w", s.prefix, k.GetKeyName(), err)
	}
	if value == nil {
		value = []byte{}
	}
	s.mu.Lock()
	ks := s.state(k.GetKeyName())
	ks.owned, ks.want = true, value
	s.enqueueLocked(k.GetKeyName(), ks, value, false)
	s.mu.Unlock()
	return nil
}

// DeleteKey queues the deletion of k.
func (s *SyncStore) DeleteKey(_ context.Context, k Key) {
	s.mu.Lock()
	ks := s.state(k.GetKeyName())
	ks.owned, ks.want, ks.conflict = false, nil, conflictState{}
	delete(s.conflicted, k.GetKeyName())
	s.enqueueLocked(k.GetKeyName(), ks, nil, false)
	s.mu.Unlock()
}

// Synced asks for the canary once everything queued so far is written;
// callbacks run after it is.
func (s *SyncStore) Synced(_ context.Context, callbacks ...func(context.Context)) {
	s.mu.Lock()
	if s.syncSeq == 0 {
		s.syncSeq = s.seq + 1 // covers every op queued up to now
	}
	s.syncFns = append(s.syncFns, callbacks...)
	s.mu.Unlock()
	s.signal()
}

// IsSynced reports whether the canary has been written.
func (s *SyncStore) IsSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.synced
}

func (s *SyncStore) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// onLeaseExpired writes a key of ours again after its lease expired.
func (s *SyncStore) onLeaseExpired(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == s.canaryKey {
		if s.synced {
			s.enqueueLocked(canaryName, s.state(canaryName), []byte{}, false)
		}
		return
	}
	name := strings.TrimPrefix(key, s.prefix)
	if ks, ok := s.keys[name]; ok && ks.owned {
		s.log.Info("Writing key again after its lease expired", "key", key)
		s.enqueueLocked(name, ks, ks.want, false)
	}
}
