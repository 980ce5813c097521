package identitycache

import (
	"log/slog"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
)

// NotifyReserved hands the reserved identities to the observers; the
// identity cell's start hook calls it once.
func (m *Manager) NotifyReserved() { m.notify.flush() }

// KVStoreMode reports whether global identities live in the kvstore (New
// was given kvstoreEnabled) rather than in memory.
func (m *Manager) KVStoreMode() bool { return m.kv != nil }

// StartKVStore creates the kvstore allocator of global identities on
// backend, with this node's references suffixed by suffix (its address),
// and returns it for the caller to run (Run, SyncLocalKeys, RunGC). Only
// in KVStoreMode.
func (m *Manager) StartKVStore(backend kvstore.Backend, suffix string, log *slog.Logger, metrics *store.Metrics) (*allocator.Allocator[*identity.Identity], error) {
	opts := m.kv.allocatorOptions(log, metrics)
	opts.Backend, opts.Suffix = backend, suffix
	a, err := allocator.New(opts)
	if err != nil {
		return nil, err
	}
	m.kv.setAllocator(a)
	return a, nil
}

// Remote is the cache of the remote clusters' identities.
func (m *Manager) Remote() RemoteIdentities { return m.remote }

// Counts are the numbers of identities by scope: reserved, global,
// local and remote.
func (m *Manager) Counts() map[string]int {
	return map[string]int{"reserved": len(identity.ReservedIdentities()), "global": len(m.globals()),
		"local": m.local.len(), "remote": m.remote.len()}
}
