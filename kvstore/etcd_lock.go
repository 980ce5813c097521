package kvstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"google.golang.org/grpc/connectivity"
)

// lockSessions keeps the concurrency session (with its own short lease)
// that locks are held on, and replaces it when its lease expires.
type lockSessions struct {
	ctx    context.Context // ends at Close; sessions are kept alive until then
	client *clientv3.Client
	ttl    time.Duration

	createMu ctxMutex // serialises session creation; waiters leave when their context ends

	mu      sync.Mutex // never held while waiting on etcd
	session *concurrency.Session
	closed  bool

	// local serialises lockers in this process: etcd's mutex is keyed by
	// the session lease, so two lockers sharing a session would both get it.
	localMu sync.Mutex
	local   map[string]chan struct{}
}

// lockRevokeTimeout bounds the revocation of the lock lease at Close.
const lockRevokeTimeout = 2 * time.Second

func newLockSessions(ctx context.Context, client *clientv3.Client, ttl time.Duration) *lockSessions {
	return &lockSessions{ctx: ctx, client: client, ttl: ttl, createMu: newCtxMutex(), local: map[string]chan struct{}{}}
}

// live returns the current session if its lease is alive.
func (l *lockSessions) live() *concurrency.Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session == nil {
		return nil
	}
	select {
	case <-l.session.Done():
		l.session = nil // its lease expired: locks on it are gone
		return nil
	default:
		return l.session
	}
}

// get returns a live session, creating one if needed; it waits for etcd
// at most until ctx ends.
func (l *lockSessions) get(ctx context.Context) (*concurrency.Session, error) {
	if s := l.live(); s != nil {
		return s, nil
	}
	if err := l.createMu.lock(ctx); err != nil {
		return nil, fmt.Errorf("create lock session: %w", err)
	}
	defer l.createMu.unlock()
	if s := l.live(); s != nil { // created while we waited
		return s, nil
	}
	ttl := int(l.ttl.Seconds())
	// Grant the lease here, with ctx: NewSession would grant it with the
	// session's context, which must outlive this call.
	resp, err := l.client.Grant(ctx, int64(ttl))
	if err != nil {
		return nil, fmt.Errorf("create lock session: grant lease: %w", err)
	}
	s, err := concurrency.NewSession(l.client, concurrency.WithLease(resp.ID), concurrency.WithTTL(ttl),
		concurrency.WithContext(l.ctx))
	if err != nil {
		return nil, fmt.Errorf("create lock session: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		s.Orphan()
		return nil, fmt.Errorf("create lock session: %w", ErrClosed)
	}
	l.session = s
	return s, nil
}

// total returns the number of lock leases (0 or 1).
func (l *lockSessions) total() int {
	if l.live() == nil {
		return 0
	}
	return 1
}

// reset drops the session after etcd went back in time: locks held on it
// may no longer exist. Their Unlock reports ErrLockLost; the next LockPath
// creates a new session.
func (l *lockSessions) reset() {
	l.mu.Lock()
	s := l.session
	l.session = nil
	l.mu.Unlock()
	if s != nil {
		s.Orphan()
	}
}

// close ends the session and revokes its lease, so that every lock is
// released at once instead of after the TTL; the revocation is skipped
// when etcd is not connected and bounded otherwise.
func (l *lockSessions) close() {
	l.mu.Lock()
	s := l.session
	l.session, l.closed = nil, true
	l.mu.Unlock()
	if s == nil {
		return
	}
	s.Orphan()
	if l.client.ActiveConnection().GetState() != connectivity.Ready {
		return // the lease expires with its TTL
	}
	ctx, cancel := context.WithTimeout(context.Background(), lockRevokeTimeout)
	defer cancel()
	_, _ = l.client.Revoke(ctx, s.Lease())
}

// lockLocal takes the in-process lock of path, waiting until ctx ends.
func (l *lockSessions) lockLocal(ctx context.Context, path string) error {
	for {
		l.localMu.Lock()
		held, ok := l.local[path]
		if !ok {
			l.local[path] = make(chan struct{})
			l.localMu.Unlock()
			return nil
		}
		l.localMu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *lockSessions) unlockLocal(path string) {
	l.localMu.Lock()
	defer l.localMu.Unlock()
	if ch, ok := l.local[path]; ok {
		close(ch)
		delete(l.local, path)
	}
}

func (e *etcdBackend) LockPath(ctx context.Context, path string) (_ Unlocker, err error) {
	ctx, done := e.begin(ctx, "lock")
	defer done(&err)
	if err := e.locks.lockLocal(ctx, path); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	s, err := e.locks.get(ctx)
	if err != nil {
		e.locks.unlockLocal(path)
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	m := concurrency.NewMutex(s, path)
	if err := e.lockMutex(ctx, m, path); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &etcdLock{e: e, mutex: m, session: s, path: path}, nil
}

// lockMutex takes m and returns when ctx ends even if m.Lock does not:
// when its wait fails, etcd's mutex deletes its key with the client's own
// context, which only ends at Close, so with etcd unreachable Lock would
// block until then. The local lock of path is released when the attempt
// is over, also if it finishes after lockMutex returned (a late success
// is unlocked at once), so that no other locker in this process shares a
// key with it.
func (e *etcdBackend) lockMutex(ctx context.Context, m *concurrency.Mutex, path string) error {
	result := make(chan error, 1)
	if !e.spawn(func() { result <- m.Lock(ctx) }) {
		e.locks.unlockLocal(path)
		return ErrClosed
	}
	select {
	case err := <-result:
		if err != nil {
			e.locks.unlockLocal(path)
		}
		return err
	case <-ctx.Done():
	}
	cleanup := func() {
		defer e.locks.unlockLocal(path)
		if err := <-result; err == nil {
			uctx, cancel := context.WithTimeout(e.ctx, lockRevokeTimeout)
			defer cancel()
			_ = m.Unlock(uctx)
		}
	}
	if !e.spawn(cleanup) {
		// Closed: the attempt ends with the client; its key is bound to
		// the lock lease, revoked or expiring.
		go cleanup()
	}
	return ctx.Err()
}

type etcdLock struct {
	e       *etcdBackend
	mutex   *concurrency.Mutex
	session *concurrency.Session
	path    string
}

var _ LockWatcher = (*etcdLock)(nil)

// Lost implements LockWatcher: the lock session's lease is gone.
func (l *etcdLock) Lost() <-chan struct{} { return l.session.Done() }

func (l *etcdLock) Unlock(ctx context.Context) (err error) {
	ctx, done := l.e.begin(ctx, "unlock")
	defer done(&err)
	defer l.e.locks.unlockLocal(l.path)
	if l.e.ctx.Err() != nil {
		return fmt.Errorf("unlock %s: %w", l.path, ErrClosed)
	}
	select {
	case <-l.session.Done():
		return fmt.Errorf("unlock %s: %w", l.path, ErrLockLost)
	default:
	}
	if err := l.mutex.Unlock(ctx); err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}
