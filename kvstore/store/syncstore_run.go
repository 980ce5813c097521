package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/apiary-net/apiary/kvstore"
)

// writeTimeout bounds one write request.
const writeTimeout = 30 * time.Second

// Run writes queued changes until ctx ends, up to the configured number
// of requests at once, watches the store's keys (unless a WatchStore
// created WithWriter hands it the events) and compares every local key
// with the kvstore on the periodic sync.
func (s *SyncStore) Run(ctx context.Context) {
	s.backend.OnLeaseExpired(s.prefix, s.onLeaseExpired)
	s.backend.OnLeaseExpired(s.canaryKey, s.onLeaseExpired)
	var wg sync.WaitGroup
	defer wg.Wait()
	s.mu.Lock()
	ownWatch := !s.fedByWatch
	s.mu.Unlock()
	if ownWatch {
		wg.Go(func() { s.watchOwnKeys(ctx) })
	}
	periodic := time.NewTicker(s.periodic)
	defer periodic.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	slots := make(chan struct{}, s.workers)
	for {
		// Take a slot first: while all are busy, changes pile up into
		// fuller batches.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		batch, wait := s.next()
		if len(batch) > 0 {
			wg.Go(func() {
				s.write(ctx, batch)
				<-slots
				s.signal()
			})
			continue
		}
		<-slots
		s.maybeWriteCanary(ctx)
		var fire <-chan time.Time
		if wait > 0 {
			timer.Reset(wait)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-fire:
		case <-periodic.C:
			s.verifyAll("periodic sync")
		}
	}
}

// write does one write request and records its outcome.
func (s *SyncStore) write(ctx context.Context, batch []*syncOp) {
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if batch[0].name == canaryName {
		err := s.writeCanary(wctx)
		s.complete(ctx, batch, nil, err, wctx.Err() != nil)
		return
	}
	ops := make([]kvstore.Op, len(batch))
	for i, op := range batch {
		ops[i] = kvstore.Op{Key: s.prefix + op.name, Value: op.value, Lease: s.lease, Delete: op.value == nil}
	}
	res, err := s.backend.Batch(wctx, ops)
	if err == nil && len(res) != len(ops) {
		err = fmt.Errorf("write batch of %d keys: backend returned %d results", len(ops), len(res))
	}
	s.complete(ctx, batch, res, err, wctx.Err() != nil)
}

// complete records the outcome of a write request: failed ops are queued
// again (alone, when etcd refused their batch), repairs that had to write
// are conflicts, and the next changes of the keys become due.
func (s *SyncStore) complete(ctx context.Context, batch []*syncOp, res []kvstore.OpResult, err error, timedOut bool) {
	now := time.Now()
	split := err != nil && !timedOut && len(batch) > 1
	var conflicts []Conflict
	var retryIn time.Duration
	s.mu.Lock()
	for i, op := range batch {
		ks := s.keys[op.name]
		ks.inflight = nil
		switch {
		case err == nil && op.repair:
			if c, ok := s.recordRepairLocked(op, ks, res[i], now); ok {
				conflicts = append(conflicts, c)
			}
		case err != nil && ctx.Err() == nil:
			retryIn = max(retryIn, s.retryLocked(op, ks, split, now))
		}
		if q := ks.queued; q != nil && q.where == placeNone {
			s.queue.push(q, now)
		} else if ks.recheck && ks.owned && q == nil {
			s.enqueueLocked(op.name, ks, ks.want, true)
		}
		ks.recheck = false
		s.touch(op.name, ks)
	}
	s.queueSize.Set(float64(len(s.active)))
	s.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		s.metrics.WriteErrors.WithLabelValues(s.scope).Inc()
		s.logFailure(batch, split, retryIn, err)
	}
	for _, c := range conflicts {
		s.reportConflict(c)
	}
}

// retryLocked queues a failed op again, unless a newer change of its key
// is queued (that one carries the failed one's place for the canary). It
// returns the wait before the retry.
func (s *SyncStore) retryLocked(op *syncOp, ks *keyState, split bool, now time.Time) time.Duration {
	if newer := ks.queued; newer != nil {
		newer.seq = min(newer.seq, op.seq)
		return 0
	}
	var wait time.Duration
	if split {
		op.solo = true // try it alone at once: the others are not held back by it
	} else {
		op.failures++
		wait = s.retry.Duration(op.failures)
	}
	op.notBefore = now.Add(wait)
	ks.queued = op
	s.queue.push(op, now)
	return wait
}

func (s *SyncStore) logFailure(batch []*syncOp, split bool, retryIn time.Duration, err error) {
	first := s.prefix + batch[0].name
	if batch[0].name == canaryName {
		first = s.canaryKey
	}
	if split {
		s.log.Warn("Batch write failed, writing its keys one at a time", "keys", len(batch), "first", first, "error", err)
		return
	}
	s.log.Warn("Write failed, retrying", "key", first, "keys", len(batch), "attempt", batch[0].failures,
		"retry-in", retryIn, "error", err)
}

// maybeWriteCanary writes the canary once Synced was called and nothing
// queued before it is left.
func (s *SyncStore) maybeWriteCanary(ctx context.Context) {
	s.mu.Lock()
	if s.synced || s.syncSeq == 0 {
		s.mu.Unlock()
		return
	}
	for _, ks := range s.active {
		if (ks.queued != nil && ks.queued.seq < s.syncSeq) || (ks.inflight != nil && ks.inflight.seq < s.syncSeq) {
			s.mu.Unlock()
			return
		}
	}
	s.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	err := s.writeCanary(wctx)
	cancel()
	if err != nil {
		s.mu.Lock()
		s.enqueueLocked(canaryName, s.state(canaryName), []byte{}, false) // retried like any write
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	s.synced = true
	fns := s.syncFns
	s.syncFns = nil
	s.mu.Unlock()
	s.metrics.Synced.WithLabelValues(s.scope, "write").Set(1)
	s.log.Info("Initial keys written, sync canary set", "canary", s.canaryKey)
	for _, fn := range fns {
		fn(ctx)
	}
}

func (s *SyncStore) writeCanary(ctx context.Context) error {
	return s.backend.Update(ctx, s.canaryKey, []byte(time.Now().UTC().Format(time.RFC3339)), s.lease)
}
