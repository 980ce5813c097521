package kvstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// lockSessions keeps the concurrency session (with its own short lease)
// that locks are held on, and replaces it when its lease expires.
type lockSessions struct {
	client *clientv3.Client
	ttl    time.Duration

	mu      sync.Mutex
	session *concurrency.Session

	// local serialises lockers in this process: etcd's mutex is keyed by
	// the session lease, so two lockers sharing a session would both get it.
	localMu sync.Mutex
	local   map[string]chan struct{}
}

func newLockSessions(client *clientv3.Client, ttl time.Duration) *lockSessions {
	return &lockSessions{client: client, ttl: ttl, local: map[string]chan struct{}{}}
}

// get returns a live session, creating one if needed.
func (l *lockSessions) get(ctx context.Context) (*concurrency.Session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session != nil {
		select {
		case <-l.session.Done():
			l.session = nil // its lease expired: locks on it are gone
		default:
			return l.session, nil
		}
	}
	s, err := concurrency.NewSession(l.client, concurrency.WithTTL(int(l.ttl.Seconds())), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, fmt.Errorf("create lock session: %w", err)
	}
	l.session = s
	return s, nil
}

// total returns the number of lock leases (0 or 1).
func (l *lockSessions) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session == nil {
		return 0
	}
	select {
	case <-l.session.Done():
		return 0
	default:
		return 1
	}
}

func (l *lockSessions) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		// Revoking releases every lock at once instead of after the TTL.
		_, _ = l.client.Revoke(ctx, l.session.Lease())
		_ = l.session.Close()
		l.session = nil
	}
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
	defer e.track("lock")(&err)
	if err := e.locks.lockLocal(ctx, path); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	s, err := e.locks.get(ctx)
	if err == nil {
		m := concurrency.NewMutex(s, path)
		if err = m.Lock(ctx); err == nil {
			return &etcdLock{locks: e.locks, mutex: m, session: s, path: path}, nil
		}
	}
	e.locks.unlockLocal(path)
	return nil, fmt.Errorf("lock %s: %w", path, err)
}

type etcdLock struct {
	locks   *lockSessions
	mutex   *concurrency.Mutex
	session *concurrency.Session
	path    string
}

func (l *etcdLock) Unlock(ctx context.Context) error {
	defer l.locks.unlockLocal(l.path)
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
