package kvstoretest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/kvstore"
)

// Memory is an in-memory key-value store shared by any number of
// backends (one per simulated agent), with etcd's semantics: revisions,
// session leases, prefix watches and locks.
type Memory struct {
	mu       sync.Mutex
	rev      int64
	data     map[string]memValue
	watchers map[*memWatch]struct{}
	locks    map[string]chan struct{}
	nextID   int64
}

type memValue struct {
	data   []byte
	modRev int64
	lease  int64
}

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{data: map[string]memValue{}, watchers: map[*memWatch]struct{}{}, locks: map[string]chan struct{}{}}
}

// NewBackend returns a backend on the store with its own session lease.
func (m *Memory) NewBackend() *MemoryBackend {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	return &MemoryBackend{m: m, lease: m.nextID, done: make(chan struct{})}
}

// put stores key and notifies watchers; m.mu is held.
func (m *Memory) put(key string, value []byte, lease int64) {
	m.rev++
	_, existed := m.data[key]
	m.data[key] = memValue{data: bytes.Clone(value), modRev: m.rev, lease: lease}
	typ := kvstore.EventCreate
	if existed {
		typ = kvstore.EventModify
	}
	m.notify(kvstore.Event{Type: typ, Key: key, Value: bytes.Clone(value)})
}

// del removes key and notifies watchers; m.mu is held.
func (m *Memory) del(key string) {
	if _, ok := m.data[key]; !ok {
		return
	}
	m.rev++
	delete(m.data, key)
	m.notify(kvstore.Event{Type: kvstore.EventDelete, Key: key})
}

func (m *Memory) notify(ev kvstore.Event) {
	for w := range m.watchers {
		if strings.HasPrefix(ev.Key, w.prefix) {
			w.queue = append(w.queue, ev)
			w.signal()
		}
	}
}

// MemoryBackend is one client of a Memory store.
type MemoryBackend struct {
	m     *Memory
	lease int64

	obsMu     sync.Mutex
	observers []memObserver
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

type memObserver struct {
	prefix string
	fn     func(string)
}

var _ kvstore.Backend = (*MemoryBackend)(nil)

// ExpireSession simulates the expiry of the backend's session lease: its
// keys are deleted (watchers see the deletions), a new lease is taken and
// lease observers are told about each key.
func (b *MemoryBackend) ExpireSession() {
	b.m.mu.Lock()
	var keys []string
	for k, v := range b.m.data {
		if v.lease == b.lease {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		b.m.del(k)
	}
	b.m.nextID++
	b.lease = b.m.nextID
	b.m.mu.Unlock()
	b.obsMu.Lock()
	obs := append([]memObserver(nil), b.observers...)
	b.obsMu.Unlock()
	for _, k := range keys {
		for _, o := range obs {
			if strings.HasPrefix(k, o.prefix) {
				o.fn(k)
			}
		}
	}
}

func (b *MemoryBackend) leaseID(lease bool) int64 {
	if lease {
		return b.lease
	}
	return 0
}

// Get implements kvstore.Backend.
func (b *MemoryBackend) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	if v, ok := b.m.data[key]; ok {
		return bytes.Clone(v.data), nil
	}
	return nil, nil
}

// ListPrefix implements kvstore.Backend.
func (b *MemoryBackend) ListPrefix(ctx context.Context, prefix string) (map[string]kvstore.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	out := map[string]kvstore.Value{}
	for k, v := range b.m.data {
		if strings.HasPrefix(k, prefix) {
			out[k] = kvstore.Value{Data: bytes.Clone(v.data), ModRevision: v.modRev, LeaseID: v.lease}
		}
	}
	return out, nil
}

// Update implements kvstore.Backend.
func (b *MemoryBackend) Update(ctx context.Context, key string, value []byte, lease bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	b.m.put(key, value, b.leaseID(lease))
	return nil
}

// UpdateIfDifferent implements kvstore.Backend.
func (b *MemoryBackend) UpdateIfDifferent(ctx context.Context, key string, value []byte, lease bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	if v, ok := b.m.data[key]; ok && bytes.Equal(v.data, value) && v.lease == b.leaseID(lease) {
		return false, nil
	}
	b.m.put(key, value, b.leaseID(lease))
	return true, nil
}

// CreateOnly implements kvstore.Backend.
func (b *MemoryBackend) CreateOnly(ctx context.Context, key string, value []byte, lease bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	if _, ok := b.m.data[key]; ok {
		return false, nil
	}
	b.m.put(key, value, b.leaseID(lease))
	return true, nil
}

// Delete implements kvstore.Backend.
func (b *MemoryBackend) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	b.m.del(key)
	return nil
}

// DeletePrefix implements kvstore.Backend.
func (b *MemoryBackend) DeletePrefix(ctx context.Context, prefix string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	for k := range b.m.data {
		if strings.HasPrefix(k, prefix) {
			b.m.del(k)
		}
	}
	return nil
}

// OnLeaseExpired implements kvstore.Backend.
func (b *MemoryBackend) OnLeaseExpired(prefix string, fn func(key string)) {
	b.obsMu.Lock()
	defer b.obsMu.Unlock()
	b.observers = append(b.observers, memObserver{prefix: prefix, fn: fn})
}

// Status implements kvstore.Backend.
func (b *MemoryBackend) Status() kvstore.Status {
	return kvstore.Status{State: kvstore.StateOK, Message: fmt.Sprintf("memory: session lease %d", b.lease)}
}

// Close implements kvstore.Backend: it ends every watch of this backend.
func (b *MemoryBackend) Close() {
	b.closeOnce.Do(func() { close(b.done) })
	b.wg.Wait()
}
