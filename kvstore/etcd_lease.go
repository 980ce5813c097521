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
	ctx       context.Context
	client    *clientv3.Client
	ttl       time.Duration
	log       *slog.Logger
	onExpired func(keys []string)
	wg        *sync.WaitGroup

	grantMu sync.Mutex // serialises grants

	mu      sync.Mutex
	current clientv3.LeaseID
	count   map[clientv3.LeaseID]int
	keys    map[string]clientv3.LeaseID
}

func newLeaseManager(ctx context.Context, client *clientv3.Client, ttl time.Duration, log *slog.Logger,
	onExpired func([]string), wg *sync.WaitGroup) *leaseManager {
	return &leaseManager{
		ctx: ctx, client: client, ttl: ttl, log: log, onExpired: onExpired, wg: wg,
		count: map[clientv3.LeaseID]int{},
		keys:  map[string]clientv3.LeaseID{},
	}
}

// leaseFor returns the lease key should be written with: the one it is
// already bound to, else the current lease if it has room, else a new one.
func (m *leaseManager) leaseFor(ctx context.Context, key string) (clientv3.LeaseID, error) {
	if id, ok := m.assign(key); ok {
		return id, nil
	}
	m.grantMu.Lock()
	defer m.grantMu.Unlock()
	if id, ok := m.assign(key); ok { // granted while we waited
		return id, nil
	}
	id, err := m.grant(ctx)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.current = id
	m.count[id] = 0
	m.mu.Unlock()
	id, _ = m.assign(key)
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

func (m *leaseManager) grant(ctx context.Context) (clientv3.LeaseID, error) {
	resp, err := m.client.Grant(ctx, int64(m.ttl.Seconds()))
	if err != nil {
		return 0, fmt.Errorf("grant session lease: %w", err)
	}
	ka, err := m.client.KeepAlive(m.ctx, resp.ID)
	if err != nil {
		return 0, fmt.Errorf("keep session lease %x alive: %w", resp.ID, err)
	}
	m.log.Info("Granted session lease", "lease", fmt.Sprintf("%x", resp.ID), "ttl", m.ttl)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for range ka { // drain keepalive responses until the lease is gone
		}
		if m.ctx.Err() == nil {
			m.log.Warn("Session lease expired, keys bound to it will be written again", "lease", fmt.Sprintf("%x", resp.ID))
			m.expire(resp.ID)
		}
	}()
	return resp.ID, nil
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
	if m.current == id {
		m.current = 0
	}
	m.mu.Unlock()
	if len(keys) > 0 {
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
