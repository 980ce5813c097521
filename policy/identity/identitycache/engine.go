package identitycache

import (
	"errors"
	"log/slog"
	"path/filepath"

	"k8s.io/client-go/dynamic"

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
func (m *Manager) KVStoreMode() bool { return m.mode == KVStore }

// Mode returns where global identities are allocated.
func (m *Manager) Mode() Mode { return m.mode }

// StartCRD creates the allocator of global identities as CiliumIdentity
// objects on client (the cluster-scoped ciliumidentities resource) and
// returns it for the caller to run (Watch, RunSync) and to collect
// garbage with (NewCRDGC). Only in mode CRD.
func (m *Manager) StartCRD(client dynamic.ResourceInterface, log *slog.Logger) *CRDAllocator {
	a := newCRDAllocator(client, m.cfg, m.kv.events(), log)
	m.kv.setAllocator(a)
	return a
}

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

// Journal file names in the state directory.
const (
	localJournal      = "identities-local.journal"
	standaloneJournal = "identities-global.journal"
)

// PersistTo keeps the numbers of the in-memory allocators (local CIDR
// identities, and global identities in standalone mode) in journals in
// dir, loading the numbers an earlier run handed out first, so that a
// restarted agent gives every label set the number the BPF maps still
// hold for it. Call it before the first allocation; a journal that
// cannot be read fails it (numbers are never guessed).
func (m *Manager) PersistTo(dir string) error {
	if err := m.local.persist(filepath.Join(dir, localJournal)); err != nil {
		return err
	}
	if m.standalone != nil {
		return m.standalone.persist(filepath.Join(dir, standaloneJournal))
	}
	return nil
}

// ClosePersistence closes the journals PersistTo opened.
func (m *Manager) ClosePersistence() error {
	err := m.local.closeJournal()
	if m.standalone != nil {
		err = errors.Join(err, m.standalone.closeJournal())
	}
	return err
}
