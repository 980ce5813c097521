package store

import (
	"context"
	"sync"
	"time"
)

// backoff is a per-key exponential retry wait.
type backoff struct{ min, max time.Duration }

func (b backoff) wait(failures int) time.Duration {
	d := b.min
	for i := 1; i < failures && d < b.max; i++ {
		d *= 2
	}
	return min(d, b.max)
}

// Run writes queued changes until ctx ends, up to the configured number
// at once.
func (s *SyncStore) Run(ctx context.Context) {
	s.backend.OnLeaseExpired(s.prefix, s.onLeaseExpired)
	s.backend.OnLeaseExpired(s.canaryKey, s.onLeaseExpired)
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, s.workers)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		name, op, wait := s.next()
		if op != nil {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Go(func() {
				s.process(ctx, name, op)
				<-slots
				s.finish(name)
			})
			continue
		}
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
		}
	}
}

// next returns the first queued op that is due and whose key is not being
// written, or how long until one is due.
func (s *SyncStore) next() (string, *syncOp, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var wait time.Duration
	for i, name := range s.queue {
		if _, busy := s.inflight[name]; busy {
			continue
		}
		op := s.pending[name]
		if op.notBefore.After(now) {
			if d := op.notBefore.Sub(now); wait == 0 || d < wait {
				wait = d
			}
			continue
		}
		if i == 0 {
			s.queue = s.queue[1:] // the common case: no copy
		} else {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
		}
		delete(s.pending, name)
		s.inflight[name] = op.firstSeq
		return name, op, 0
	}
	return "", nil, wait
}

// finish marks a write done and wakes the dispatcher.
func (s *SyncStore) finish(name string) {
	s.mu.Lock()
	delete(s.inflight, name)
	s.mu.Unlock()
	s.signal()
}

func (s *SyncStore) process(ctx context.Context, name string, op *syncOp) {
	var err error
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	switch {
	case name == canaryName:
		err = s.writeCanary(wctx)
	case op.value == nil:
		err = s.backend.Delete(wctx, s.prefix+name)
	default:
		_, err = s.backend.UpdateIfDifferent(wctx, s.prefix+name, op.value, s.lease)
	}
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.metrics.QueueSize.WithLabelValues(s.scope).Set(float64(len(s.pending))) }()
	if err == nil || ctx.Err() != nil {
		return
	}
	s.metrics.WriteErrors.WithLabelValues(s.scope).Inc()
	if newer, ok := s.pending[name]; ok {
		newer.firstSeq = min(newer.firstSeq, op.firstSeq) // a newer change supersedes the failed one
		return
	}
	op.failures++
	wait := s.retry.wait(op.failures)
	op.notBefore = time.Now().Add(wait)
	s.pending[name] = op
	s.queue = append(s.queue, name)
	s.log.Warn("Write failed, retrying", "key", s.prefix+name, "attempt", op.failures, "retry-in", wait, "error", err)
}

// maybeWriteCanary writes the canary once Synced was called and nothing
// queued before it is left.
func (s *SyncStore) maybeWriteCanary(ctx context.Context) {
	s.mu.Lock()
	if s.synced || s.syncSeq == 0 {
		s.mu.Unlock()
		return
	}
	for _, op := range s.pending {
		if op.firstSeq < s.syncSeq {
			s.mu.Unlock()
			return
		}
	}
	for _, seq := range s.inflight {
		if seq < s.syncSeq {
			s.mu.Unlock()
			return
		}
	}
	s.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := s.writeCanary(wctx)
	cancel()
	if err != nil {
		s.mu.Lock()
		s.enqueueLocked(canaryName, []byte{}) // retried like any write
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
