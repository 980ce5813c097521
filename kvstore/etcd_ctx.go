package kvstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// begin starts an operation: the returned context also ends when the
// backend is closed, so that no call outlives Close, and the operation is
// counted in flight and timed. Call the returned function with the
// operation's error when it ends:
//
//	ctx, done := e.begin(ctx, "get")
//	defer done(&err)
//
// An error caused by Close (and not by the caller's context) is reported
// as ErrClosed.
func (e *etcdBackend) begin(ctx context.Context, op string) (context.Context, func(*error)) {
	octx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(e.ctx, cancel)
	start := time.Now()
	inFlight := e.metrics.InFlight.WithLabelValues(op)
	inFlight.Inc()
	return octx, func(errp *error) {
		stop()
		cancel()
		if *errp != nil && e.ctx.Err() != nil && ctx.Err() == nil && !errors.Is(*errp, ErrClosed) {
			*errp = fmt.Errorf("%w: %w", ErrClosed, *errp)
		}
		inFlight.Dec()
		e.metrics.observeOperation(op, time.Since(start), *errp)
	}
}

// spawn runs fn in a goroutine that Close waits for. After Close it does
// not run fn and returns false.
func (e *etcdBackend) spawn(fn func()) bool {
	e.spawnMu.Lock()
	defer e.spawnMu.Unlock()
	if e.closed {
		return false
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		fn()
	}()
	return true
}

// ctxMutex is a mutex whose lock gives up when a context ends. It guards
// work that waits on etcd (granting a lease, creating a lock session):
// whoever waits behind that work can still leave when its context ends,
// which a sync.Mutex would not allow.
type ctxMutex chan struct{}

func newCtxMutex() ctxMutex { return make(ctxMutex, 1) }

func (m ctxMutex) lock(ctx context.Context) error {
	select {
	case m <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m ctxMutex) unlock() { <-m }
