package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// closeBound is how long Close, and the calls it ends, may take whatever
// state etcd is in.
const closeBound = 5 * time.Second

// inFlight reads the operations_in_flight gauge of op.
func inFlight(m *kvstore.Metrics, op string) int {
	return int(testutil.ToFloat64(m.InFlight.WithLabelValues(op)))
}

// blockedCalls starts calls that wait on etcd, with contexts that never
// end, and waits until the backend counts them in flight.
type blockedCalls struct {
	results chan callResult
	ended   atomic.Int32
	n       int
	watch   <-chan kvstore.Event
}

type callResult struct {
	err error
	at  time.Time
}

// start runs the calls and waits until each is in flight or has ended (a
// call sent just as etcd went away may fail at once); extra maps more
// operations to how many of them must be in flight.
func (c *blockedCalls) start(t *testing.T, b kvstore.Backend, m *kvstore.Metrics, extra map[string]int) {
	t.Helper()
	ctx := context.Background()
	calls := []func() error{
		func() error { _, err := b.LockPath(ctx, "cilium/locks/close/a"); return err },
		// Waits behind the first one's lock session.
		func() error { _, err := b.LockPath(ctx, "cilium/locks/close/b"); return err },
		func() error { return b.Update(ctx, "cilium/state/close/leased", []byte("v"), true) },
		func() error { return b.Update(ctx, "cilium/state/close/leased2", []byte("v"), true) },
		func() error { return b.Update(ctx, "cilium/state/close/plain", []byte("v"), false) },
		func() error { _, err := b.ListPrefix(ctx, "cilium/state/close/"); return err },
	}
	c.results = make(chan callResult, len(calls))
	c.n = len(calls)
	for _, call := range calls {
		go func() {
			err := call()
			c.ended.Add(1)
			c.results <- callResult{err: err, at: time.Now()}
		}()
	}
	c.watch = b.ListAndWatch(ctx, "cilium/state/close/")
	celltest.Eventually(t, fmt.Sprintf("calls in flight (and %v)", extra), func() bool {
		started := inFlight(m, "lock") + inFlight(m, "update") + inFlight(m, "list") + int(c.ended.Load())
		if started < c.n {
			return false
		}
		for op, n := range extra {
			if inFlight(m, op) < n {
				return false
			}
		}
		return true
	})
}

// closeAndCheck closes b and checks that Close and every call return
// within closeBound, those still in flight at Close with ErrClosed.
func (c *blockedCalls) closeAndCheck(t *testing.T, b kvstore.Backend) {
	t.Helper()
	closed := make(chan struct{})
	begin := time.Now()
	go func() {
		b.Close()
		close(closed)
	}()
	deadline := time.After(closeBound)
	select {
	case <-closed:
	case <-deadline:
		t.Fatalf("Close did not return within %s", closeBound)
	}
	for range c.n {
		select {
		case r := <-c.results:
			switch {
			case r.err == nil:
				t.Errorf("a call succeeded without etcd")
			case r.at.Before(begin):
				t.Logf("a call failed before Close: %v", r.err)
			case !errors.Is(r.err, kvstore.ErrClosed):
				t.Errorf("call ended with %v, want ErrClosed", r.err)
			}
		case <-deadline:
			t.Fatalf("calls in flight did not return within %s of Close", closeBound)
		}
	}
	for {
		select {
		case _, ok := <-c.watch:
			if !ok {
				t.Logf("Close and every call returned in %s", time.Since(begin).Round(time.Millisecond))
				return
			}
		case <-deadline:
			t.Fatalf("watch not closed within %s of Close", closeBound)
		}
	}
}

// isFailure accepts a status saying etcd cannot be reached.
func isFailure(st kvstore.Status) bool { return st.State == kvstore.StateFailure }

func TestCloseWithEtcdUnreachableFromStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(*kvstoretest.Server)
	}{
		{"nothing listens", nil},
		{"partitioned", (*kvstoretest.Server).Partition},
		{"packets dropped", (*kvstoretest.Server).Blackhole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := kvstore.NewMetrics()
			opts := kvstore.EtcdOptions{
				Config:         &kvstore.EtcdConfig{Endpoints: []string{"http://127.0.0.1:1"}},
				StatusInterval: 100 * time.Millisecond, HeartbeatTimeout: time.Second, Metrics: m,
			}
			if tc.cut != nil {
				srv := kvstoretest.StartServer(t)
				tc.cut(srv)
				opts.Config = srv.EtcdConfig()
			}
			b, err := kvstore.NewEtcdBackend(opts)
			if err != nil {
				t.Fatal(err)
			}
			var calls blockedCalls
			calls.start(t, b, m, map[string]int{"lease-grant": 1})
			calls.closeAndCheck(t, b)

			// After Close, calls fail at once.
			ctx, cancel := context.WithTimeout(context.Background(), closeBound)
			defer cancel()
			if _, err := b.LockPath(ctx, "cilium/locks/after"); !errors.Is(err, kvstore.ErrClosed) {
				t.Errorf("LockPath after Close = %v, want ErrClosed", err)
			}
			if err := b.Update(ctx, "cilium/state/after", nil, true); !errors.Is(err, kvstore.ErrClosed) {
				t.Errorf("Update after Close = %v, want ErrClosed", err)
			}
		})
	}
}

func TestCloseWithEtcdGoneMidRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(*kvstoretest.Server)
	}{
		{"killed", (*kvstoretest.Server).Stop},
		{"partitioned", (*kvstoretest.Server).Partition},
		{"packets dropped", (*kvstoretest.Server).Blackhole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := kvstoretest.StartServer(t)
			m := kvstore.NewMetrics()
			b := srv.NewBackend(func(o *kvstore.EtcdOptions) {
				o.Metrics, o.HeartbeatTimeout, o.ConnectivityTimeout = m, time.Second, 500*time.Millisecond
			})
			// A lock session, a session lease and a held lock exist
			// when etcd goes away.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			must(t, b.Update(ctx, "cilium/state/close/before", []byte("v"), true))
			held, err := b.LockPath(ctx, "cilium/locks/close/held")
			must(t, err)
			waitStatus(t, b, "Ok", isOK)
			tc.cut(srv)
			waitStatus(t, b, "a failure", isFailure)

			var calls blockedCalls
			calls.start(t, b, m, nil)
			unlocked := make(chan error, 1)
			go func() { unlocked <- held.Unlock(context.Background()) }()
			celltest.Eventually(t, "unlock in flight", func() bool { return inFlight(m, "unlock") == 1 })
			calls.closeAndCheck(t, b)
			select {
			case err := <-unlocked:
				if !errors.Is(err, kvstore.ErrClosed) {
					t.Errorf("Unlock ended with %v, want ErrClosed", err)
				}
			case <-time.After(closeBound):
				t.Fatalf("Unlock did not return within %s of Close", closeBound)
			}
		})
	}
}

// TestLockPathHonoursContext checks that a lock waited for while etcd is
// unreachable gives up when its context ends, and leaves no local lock
// behind once etcd is back.
func TestLockPathHonoursContext(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	srv.Partition()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.LockPath(ctx, "cilium/locks/ctx")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "cilium/locks/ctx") {
			t.Errorf("LockPath = %v, want the deadline error naming the path", err)
		}
	case <-time.After(closeBound):
		t.Fatalf("LockPath did not give up within %s of its deadline", closeBound)
	}
	srv.Heal()
	lctx, lcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer lcancel()
	l, err := b.LockPath(lctx, "cilium/locks/ctx")
	must(t, err)
	must(t, l.Unlock(lctx))
}
