package svcmanager

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/apiary-net/apiary/datapath"
)

// Stats are the manager's counters, for its status line.
type Stats struct {
	// Services, Frontends and Backends are what is desired now;
	// RemoteBackends are those of remote clusters; Global counts the
	// global services.
	Services, Frontends, Backends, RemoteBackends, Global int
	// Reconciled is set once the initial ReconcileServices succeeded,
	// with what it added and removed.
	Reconciled                       bool
	ReconcileAdded, ReconcileRemoved int
	// Upserts and Deletes are the writes since (calls that changed
	// what the datapath holds, by the writer's Changes); Failures the
	// failed writes, the last one's error and time; Pending the
	// frontends a retry must write again.
	Upserts, Deletes, Failures int
	Pending                    int
	LastError                  error
	LastErrorTime              time.Time
	// PendingSince is when the writes that still wait for a retry
	// started failing (zero: none waits), for kube-proxy's health
	// check: a datapath out of step for long is unhealthy.
	PendingSince time.Time
	// Conflicts are frontends wanted by more than one service (the
	// first keeps it); Warnings are the services' warnings, by service.
	Conflicts int
	Warnings  map[string][]string

	pendingDeletes []datapath.L3n4Addr
}

// Reconcile hands every desired frontend to the writer's
// ReconcileServices: the initial full write, once the sources synced.
// Later changes are written one by one. Without a writer it only marks
// the manager reconciled.
func (m *Manager) Reconcile() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writer == nil {
		m.stats.Reconciled = true
		return nil
	}
	added, removed, err := m.writer.ReconcileServices(m.allSeq())
	m.writerChanges = m.writer.Changes()
	if err != nil {
		err = fmt.Errorf("reconcile %d frontends: %w", len(m.desired), err)
		m.failed(err)
		return err
	}
	for _, fe := range m.desired {
		fe.dirty = false
	}
	m.stats.pendingDeletes, m.stats.LastError, m.stats.PendingSince = nil, nil, time.Time{}
	m.stats.Reconciled, m.stats.ReconcileAdded, m.stats.ReconcileRemoved = true, added, removed
	m.log.Info("Reconciled the load-balancing maps", "frontends", len(m.desired), "added", added, "removed", removed)
	return nil
}

// RetryFailed writes again the frontends whose last write failed; it
// returns the errors of those failing again.
func (m *Manager) RetryFailed() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writer == nil || !m.stats.Reconciled {
		return nil
	}
	var errs []error
	deletes := m.stats.pendingDeletes
	m.stats.pendingDeletes = nil
	for _, addr := range deletes {
		if _, back := m.desired[addr]; back {
			continue // desired again: the upsert path writes it
		}
		before := len(m.stats.pendingDeletes)
		if m.remove(addr); len(m.stats.pendingDeletes) > before {
			errs = append(errs, m.stats.LastError)
		}
	}
	for _, fe := range m.sortedLocked() {
		if !fe.dirty {
			continue
		}
		e := m.services[fe.owner]
		for _, lb := range m.lists(fe.owner, e, nil, nil) {
			if lb.Frontend != fe.lb.Frontend {
				continue
			}
			if m.upsert(fe, lb); fe.dirty {
				errs = append(errs, m.stats.LastError)
			}
		}
	}
	if len(errs) == 0 {
		m.stats.LastError = nil // the failures are counted; the line is Ok again
		m.stats.PendingSince = time.Time{}
	}
	return errors.Join(errs...)
}

// NeedsRetry reports whether some write failed and waits for RetryFailed.
func (m *Manager) NeedsRetry() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pendingLocked() > 0
}

func (m *Manager) pendingLocked() int {
	n := len(m.stats.pendingDeletes)
	for _, fe := range m.desired {
		if fe.dirty {
			n++
		}
	}
	return n
}

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.stats
	st.pendingDeletes = nil
	st.Services, st.Frontends, st.Pending = len(m.services), len(m.desired), m.pendingLocked()
	if st.Pending == 0 && m.stats.Reconciled {
		m.stats.PendingSince, st.PendingSince = time.Time{}, time.Time{}
	}
	for _, fe := range m.desired {
		st.Backends += fe.backends
		st.RemoteBackends += fe.remote
	}
	st.Warnings = map[string][]string{}
	for k, e := range m.services {
		if e.svc.Global {
			st.Global++
		}
		if len(e.svc.Warnings) > 0 {
			st.Warnings[k.String()] = e.svc.Warnings
		}
	}
	for _, ks := range m.lost {
		st.Conflicts += len(ks)
	}
	return st
}

// SyncState reports whether the initial reconcile is done and, when
// writes wait for a retry, how many frontends and since when (zero: none
// waits): what the kube-proxy health check asks on every probe, without
// Stats' walk of every service (it walks the frontends only while some
// write has failed).
func (m *Manager) SyncState() (reconciled bool, pending int, since time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.stats.PendingSince.IsZero() {
		if pending = m.pendingLocked(); pending == 0 && m.stats.Reconciled {
			m.stats.PendingSince = time.Time{}
		}
	}
	return m.stats.Reconciled, pending, m.stats.PendingSince
}

// Entry is a desired frontend with the manager's id for it.
type Entry struct {
	ID uint32
	datapath.LBService
}

// ServiceAt returns the namespace and name of the service that has
// frontend addr (Hubble names the services of flows with it); a pod's
// hostPort is "<pod>:host-port:<port>", as Cilium names its HostPort
// services. It does not wait for the manager's writes.
func (m *Manager) ServiceAt(addr datapath.L3n4Addr) (namespace, name string, ok bool) {
	var k svcKey
	m.desiredMu.RLock()
	fe, ok := m.desired[addr]
	if ok {
		k = fe.owner // set when fe was made, never changed while desired holds it
	}
	m.desiredMu.RUnlock()
	if ok && k.source == SourceHostPort {
		return k.namespace, k.name + ":host-port:" + strconv.Itoa(int(addr.Port)), true
	}
	return k.namespace, k.name, ok
}

// Frontends returns the desired frontends, sorted by service name, then
// frontend. Their backend lists are computed again (the manager does not
// keep them).
func (m *Manager) Frontends() []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	lbs := m.allLists()
	out := make([]Entry, len(lbs))
	for i, lb := range lbs {
		out[i] = Entry{ID: m.desired[lb.Frontend].id, LBService: lb}
	}
	return out
}

// allLists returns every desired frontend with its backends, sorted by
// service name, then frontend (the API's order); m.mu is held. The
// lists share one array sized from the frontends' counts.
func (m *Manager) allLists() []datapath.LBService {
	n := 0
	for _, fe := range m.desired {
		n += fe.backends
	}
	arena := make([]datapath.LBBackend, 0, n)
	out := make([]datapath.LBService, 0, len(m.desired))
	for k, e := range m.services {
		out = m.lists(k, e, out, &arena)
	}
	slices.SortFunc(out, func(a, b datapath.LBService) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), compareAddr(a.Frontend, b.Frontend))
	})
	return out
}

// allSeq yields every desired frontend with its backends, one
// service's frontends at a time, their lists built in m.arena again for
// each service: the initial reconcile of a large cluster never holds
// every list at once (LBMapWriter.ReconcileServices may range over it
// more than once; it yields the same order each time). The order is
// the one the services were first upserted in: the writer needs none,
// sorting 10,000 services by name cost more than building their lists,
// and that order reads their records in the order they were allocated.
// m.mu is held while it runs.
func (m *Manager) allSeq() iter.Seq[datapath.LBService] {
	entries := make([]svcEntry, 0, len(m.services))
	for k, e := range m.services {
		entries = append(entries, svcEntry{k: k, e: e, seq: e.seq})
	}
	// The services' records and backend lists were allocated in the
	// order their entries were made: in that order the walk reads
	// memory mostly in address order, not a random line (and page) per
	// service as in the map's order.
	slices.SortFunc(entries, func(a, b svcEntry) int { return cmp.Compare(a.seq, b.seq) })
	return func(yield func(datapath.LBService) bool) {
		var out []datapath.LBService
		for _, x := range entries {
			m.arena = m.arena[:0]
			out = m.lists(x.k, x.e, out[:0], &m.arena)
			for _, lb := range out {
				if !yield(lb) {
					return
				}
			}
		}
	}
}

// svcEntry is a service's key with its entry.
type svcEntry struct {
	k   svcKey
	e   *entry
	seq uint64
}

// sortedLocked returns the desired frontends sorted by name, then
// frontend.
func (m *Manager) sortedLocked() []*frontend {
	all := slices.Collect(maps.Values(m.desired))
	slices.SortFunc(all, func(a, b *frontend) int {
		return cmp.Or(cmp.Compare(a.lb.Name, b.lb.Name), compareAddr(a.lb.Frontend, b.lb.Frontend))
	})
	return all
}
