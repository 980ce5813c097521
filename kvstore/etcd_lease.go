package kvstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxKeysPerLease bounds how many keys share one session lease, so that
// one lease's expiry or revocation stays a bounded amount of work.
const maxKeysPerLease = 1000

// leaseManager hands out session leases to keys, keeps them alive and,
// when one expires, tells the backend which keys were bound to it.
type leaseManager struct {
	ctx       context.Context // ends at Close
	client    *clientv3.Client
	ttl       time.Duration
	log       *slog.Logger
	onExpired func(keys []string)
	spawn     func(func()) bool
	begin     func(context.Context, string) (context.Context, func(*error))

	grantMu ctxMutex // serialises grants; waiters leave when their context ends

	mu      sync.Mutex
	current clientv3.LeaseID
	count   map[clientv3.LeaseID]int
	keys    map[string]clientv3.LeaseID
	stops   map[clientv3.LeaseID]context.CancelFunc // end a lease's keepalive
}

func newLeaseManager(ctx context.Context, client *clientv3.Client, ttl time.Duration, log *slog.Logger,
	onExpired func([]string), spawn func(func()) bool,
	begin func(context.Context, string) (context.Context, func(*error))) *leaseManager {
	return &leaseManager{
		ctx: ctx, client: client, ttl: ttl, log: log, onExpired: onExpired, spawn: spawn, begin: begin,
		grantMu: newCtxMutex(),
		count:   map[clientv3.LeaseID]int{},
		keys:    map[string]clientv3.LeaseID{},
		stops:   map[clientv3.LeaseID]context.CancelFunc{},
	}
}

// leaseFor returns the lease key should be written with: the one it is
// already bound to, else the current lease if it has room, else a new one.
// It waits for etcd at most until ctx ends.
func (m *leaseManager) leaseFor(ctx context.Context, key string) (clientv3.LeaseID, error) {
	if id, ok := m.assign(key); ok {
		return id, nil
	}
	if err := m.grantMu.lock(ctx); err != nil {
		return 0, fmt.Errorf("grant session lease: %w", err)
	}
	defer m.grantMu.unlock()
	if id, ok := m.assign(key); ok { // granted while we waited
		return id, nil
	}
	if _, err := m.grant(ctx); err != nil {
		return 0, err
	}
	id, _ := m.assign(key)
	return id, nil
}

// assign binds key to its lease or the current one, if there is room.
func (m *leaseManager) assign(key string) (clientv3.LeaseID, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.keys[key]; ok {
		return id, true
	}
	if m.current == 0 || m.count[m.current] >= maxKeysPerLease {
		return 0, false
	}
	m.keys[key] = m.current
	m.count[m.current]++
	return m.current, true
}

// grant grants a new lease, makes it the current one and keeps it alive
// until it expires, reset drops it or the backend is closed.
func (m *leaseManager) grant(ctx context.Context) (_ clientv3.LeaseID, err error) {
	ctx, done := m.begin(ctx, "lease-grant")
	defer done(&err)
	resp, err := m.client.Grant(ctx, int64(m.ttl.Seconds()))
	if err != nil {
		return 0, fmt.Errorf("grant session lease: %w", err)
	}
	kctx, stop := context.WithCancel(m.ctx)
	ka, err := m.client.KeepAlive(kctx, resp.ID)
	if err != nil {
		stop()
		return 0, fmt.Errorf("keep session lease %x alive: %w", resp.ID, err)
	}
	m.mu.Lock()
	m.current = resp.ID
	m.count[resp.ID] = 0
	m.stops[resp.ID] = stop
	m.mu.Unlock()
	started := m.spawn(func() {
		for range ka { // drain keepalive responses until the lease is gone
		}
		stop()
		if m.ctx.Err() == nil {
			m.lost(resp.ID)
		}
	})
	if !started {
		stop()
		return 0, ErrClosed
	}
	m.log.Info("Granted session lease", "lease", fmt.Sprintf("%x", resp.ID), "ttl", m.ttl)
	return resp.ID, nil
}

// lost handles the end of a lease's keepalive: unless reset dropped the
// lease already, etcd no longer knows it.
func (m *leaseManager) lost(id clientv3.LeaseID) {
	m.mu.Lock()
	_, known := m.count[id]
	m.mu.Unlock()
	if known {
		m.log.Warn("Session lease expired, keys bound to it will be written again", "lease", fmt.Sprintf("%x", id))
		m.expire(id)
	}
}

// expire forgets lease id and reports the keys that were bound to it.
func (m *leaseManager) expire(id clientv3.LeaseID) {
	m.mu.Lock()
	if _, ok := m.count[id]; !ok {
		m.mu.Unlock()
		return
	}
	var keys []string
	for k, l := range m.keys {
		if l == id {
			keys = append(keys, k)
			delete(m.keys, k)
		}
	}
	delete(m.count, id)
	if stop := m.stops[id]; stop != nil {
		stop()
		delete(m.stops, id)
	}
	if m.current == id {
		m.current = 0
	}
	m.mu.Unlock()
	if len(keys) > 0 {
		m.onExpired(keys)
	}
}

// reset drops every session lease after etcd went back in time: the keys
// bound to them may be gone, or stale. They are reported as expired, so
// their stores write them again on a new lease. The old leases are no
// longer kept alive: if the restored etcd still knows one, it expires
// after its TTL, and with it the stale keys nobody wrote again.
func (m *leaseManager) reset() {
	m.mu.Lock()
	keys := make([]string, 0, len(m.keys))
	for k := range m.keys {
		keys = append(keys, k)
	}
	for _, stop := range m.stops {
		stop()
	}
	m.current = 0
	m.count = map[clientv3.LeaseID]int{}
	m.keys = map[string]clientv3.LeaseID{}
	m.stops = map[clientv3.LeaseID]context.CancelFunc{}
	m.mu.Unlock()
	if len(keys) > 0 {
		m.log.Info("Writing keys again on a new session lease", "keys", len(keys))
		m.onExpired(keys)
	}
}

// leaseOf returns the lease key is bound to.
func (m *leaseManager) leaseOf(key string) (clientv3.LeaseID, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.keys[key]
	return id, ok
}

// release unbinds key (it was deleted or written without a lease).
func (m *leaseManager) release(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.keys[key]; ok {
		delete(m.keys, key)
		m.count[id]--
	}
}

func (m *leaseManager) releasePrefix(prefix string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, id := range m.keys {
		if strings.HasPrefix(k, prefix) {
			delete(m.keys, k)
			m.count[id]--
		}
	}
}

// total returns the number of live session leases.
func (m *leaseManager) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.count)
}
