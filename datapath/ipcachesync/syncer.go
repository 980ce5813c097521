package ipcachesync

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Syncer keeps the BPF ipcache map equal to the ipcache. It is the
// cache's listener (OnIPCacheChanged queues, never writes); Flush and
// Reconcile write, one at a time.
type Syncer struct {
	w    datapath.IPCacheMapWriter
	ipc  ipcache.IPCache
	log  *slog.Logger
	kick func()

	wmu sync.Mutex // serialises the writes

	mu         sync.Mutex
	pending    []pendingChange
	reconciled bool // the initial reconcile is done
	resync     bool // a write failed: the next Flush reconciles in full
	stats      Stats
}

type pendingChange struct {
	rev ipcache.Revision
	ch  datapath.IPCacheMapChange
}

// Stats are what the syncer did, for its status line.
type Stats struct {
	// Reconciled: the initial reconcile is done.
	Reconciled bool
	// Upserts and Deletes count the entries written and deleted by
	// Flush; ReconcileAdded and ReconcileRemoved those of the last
	// Reconcile.
	Upserts, Deletes                 int
	ReconcileAdded, ReconcileRemoved int
	// Pending is the number of changes waiting to be written.
	Pending int
	// LastError is the error of the last write (nil once a write
	// succeeded).
	LastError error
}

var _ ipcache.Listener = (*Syncer)(nil)

// New returns a syncer writing to w what ipc holds; kick asks for a
// Flush soon (the cell's trigger), it must not block.
func New(w datapath.IPCacheMapWriter, ipc ipcache.IPCache, log *slog.Logger, kick func()) *Syncer {
	return &Syncer{w: w, ipc: ipc, log: log, kick: kick}
}

// SetIPCache sets the cache Reconcile reads (the cell sets it once the
// cache, which needs the syncer as its listener, exists).
func (s *Syncer) SetIPCache(ipc ipcache.IPCache) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ipc = ipc
}

// OnIPCacheChanged implements ipcache.Listener: it queues the changes
// and asks for a Flush.
func (s *Syncer) OnIPCacheChanged(rev ipcache.Revision, changes []ipcache.Change) {
	s.mu.Lock()
	for _, c := range changes {
		s.pending = append(s.pending, pendingChange{rev: rev, ch: mapChange(c)})
	}
	s.mu.Unlock()
	s.kick()
}

// mapChange turns an ipcache change into a map change.
func mapChange(c ipcache.Change) datapath.IPCacheMapChange {
	if c.New == nil {
		return datapath.IPCacheMapChange{Entry: datapath.IPCacheMapEntry{Prefix: c.Prefix}, Delete: true}
	}
	return datapath.IPCacheMapChange{Entry: mapEntry(*c.New)}
}

func mapEntry(e ipcache.Entry) datapath.IPCacheMapEntry {
	return datapath.IPCacheMapEntry{Prefix: e.Prefix, Identity: e.Identity, TunnelPeer: e.TunnelPeer, EncryptKey: e.EncryptKey}
}

// Flush writes the queued changes in one batch. After a failed write
// (once the initial reconcile is done) it reconciles in full instead.
// A failed batch before the initial reconcile is left to it.
func (s *Syncer) Flush(ctx context.Context) error {
	s.mu.Lock()
	resync := s.resync && s.reconciled
	s.mu.Unlock()
	if resync {
		return s.Reconcile(ctx)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	batch := s.pending
	s.pending = nil
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	changes := make([]datapath.IPCacheMapChange, len(batch))
	ups := 0
	for i, p := range batch {
		changes[i] = p.ch
		if !p.ch.Delete {
			ups++
		}
	}
	err := s.w.ApplyIPCache(changes)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.LastError = err
	if err != nil {
		s.resync = true
		return fmt.Errorf("write %d ipcache changes to the BPF map: %w", len(changes), err)
	}
	s.stats.Upserts += ups
	s.stats.Deletes += len(changes) - ups
	return nil
}

// Reconcile makes the map hold exactly the cache's entries. The queued
// changes that the entries read include are dropped; later ones stay
// queued for the next Flush.
func (s *Syncer) Reconcile(context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	ipc := s.ipc
	s.mu.Unlock()
	// Every change up to rev was applied to the entries before the
	// listeners heard of it, so the entries read next include them.
	rev := ipc.Revision()
	entries := ipc.Entries()
	want := make([]datapath.IPCacheMapEntry, len(entries))
	for i, e := range entries {
		want[i] = mapEntry(e)
	}
	added, removed, err := s.w.ReconcileIPCache(want)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.LastError = err
	if err != nil {
		s.resync = true
		return fmt.Errorf("reconcile the BPF ipcache map: %w", err)
	}
	s.pending = slices.DeleteFunc(s.pending, func(p pendingChange) bool { return p.rev <= rev })
	s.reconciled, s.resync = true, false
	s.stats.ReconcileAdded, s.stats.ReconcileRemoved = added, removed
	s.log.Info("Reconciled the BPF ipcache map", "entries", len(want), "added", added, "removed", removed)
	return nil
}

// NeedsResync reports whether a write failed since the last
// successful Reconcile.
func (s *Syncer) NeedsResync() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resync
}

// Stats returns what the syncer did so far.
func (s *Syncer) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Reconciled, st.Pending = s.reconciled, len(s.pending)
	return st
}
