package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apiary-net/apiary/kvstore"
)

// SyncStore writes this agent's keys under a prefix. Upserts and deletes
// go through a queue that coalesces changes of the same key and retries
// failed writes with backoff. Once Synced has been called and every change
// queued before it is written, the sync canary
// cilium/synced/<cluster>/<prefix> is written (RFC 3339 time), so readers
// in "sync" mode know the prefix is complete.
type SyncStore struct {
	backend   kvstore.Backend
	prefix    string // with trailing slash
	canaryKey string
	lease     bool
	log       *slog.Logger
	metrics   *Metrics
	scope     string
	retry     backoff

	mu        sync.Mutex
	wake      chan struct{}
	queue     []string // names in arrival order
	pending   map[string]*syncOp
	inflight  map[string]uint64 // names being written, with their firstSeq
	workers   int
	local     map[string][]byte // what this agent wants to exist
	seq       uint64
	syncSeq   uint64 // 0: Synced not called yet
	syncFns   []func(context.Context)
	synced    bool
	canaryDue bool
}

// canaryName is the queue name of the canary write; it cannot clash with a
// key name, which never starts with a NUL byte.
const canaryName = "\x00canary"

type syncOp struct {
	value     []byte // nil: delete
	firstSeq  uint64
	notBefore time.Time
	failures  int
}

// SyncStoreOption configures a SyncStore.
type SyncStoreOption func(*SyncStore)

// WithoutLease writes keys that outlive the agent (not bound to the
// session lease).
func WithoutLease() SyncStoreOption { return func(s *SyncStore) { s.lease = false } }

// WithSyncLogger sets the logger.
func WithSyncLogger(log *slog.Logger) SyncStoreOption { return func(s *SyncStore) { s.log = log } }

// WithSyncMetrics sets the metrics.
func WithSyncMetrics(m *Metrics) SyncStoreOption { return func(s *SyncStore) { s.metrics = m } }

// WithRetryBackoff sets the backoff of failed writes (default 100ms to 30s).
func WithRetryBackoff(minWait, maxWait time.Duration) SyncStoreOption {
	return func(s *SyncStore) { s.retry = backoff{min: minWait, max: maxWait} }
}

// WithWorkers sets how many writes may be in flight at once (default 32;
// never two for the same key).
func WithWorkers(n int) SyncStoreOption {
	return func(s *SyncStore) { s.workers = max(1, n) }
}

// NewSyncStore creates a writer for prefix of cluster.
func NewSyncStore(cluster string, backend kvstore.Backend, prefix string, opts ...SyncStoreOption) *SyncStore {
	prefix = dirPrefix(prefix)
	s := &SyncStore{
		backend:   backend,
		prefix:    prefix,
		canaryKey: kvstore.SyncedPrefix + cluster + "/" + strings.TrimSuffix(prefix, "/"),
		lease:     true,
		log:       slog.New(slog.DiscardHandler),
		scope:     strings.TrimSuffix(prefix, "/"),
		retry:     backoff{min: 100 * time.Millisecond, max: 30 * time.Second},
		wake:      make(chan struct{}, 1),
		pending:   map[string]*syncOp{},
		inflight:  map[string]uint64{},
		workers:   32,
		local:     map[string][]byte{},
	}
	for _, o := range opts {
		o(s)
	}
	s.metrics = metricsOrDefault(s.metrics)
	s.metrics.Synced.WithLabelValues(s.scope, "write").Set(0)
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
	s.local[k.GetKeyName()] = value
	s.enqueueLocked(k.GetKeyName(), value)
	s.mu.Unlock()
	return nil
}

// DeleteKey queues the deletion of k.
func (s *SyncStore) DeleteKey(_ context.Context, k Key) {
	s.mu.Lock()
	delete(s.local, k.GetKeyName())
	s.enqueueLocked(k.GetKeyName(), nil)
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

func (s *SyncStore) enqueueLocked(name string, value []byte) {
	s.seq++
	if op, ok := s.pending[name]; ok {
		op.value, op.notBefore, op.failures = value, time.Time{}, 0
	} else {
		s.pending[name] = &syncOp{value: value, firstSeq: s.seq}
		s.queue = append(s.queue, name)
	}
	s.metrics.QueueSize.WithLabelValues(s.scope).Set(float64(len(s.pending)))
	s.signal()
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
			s.enqueueLocked(canaryName, []byte{})
		}
		return
	}
	name := strings.TrimPrefix(key, s.prefix)
	if value, ok := s.local[name]; ok {
		s.log.Info("Writing key again after its lease expired", "key", key)
		s.enqueueLocked(name, value)
	}
}
