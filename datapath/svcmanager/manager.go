package svcmanager

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/datapath"
)

// Source names, the origin of a service (SetRemoteBackends looks a
// service up under each).
const (
	SourceKubernetes = "k8s"
	SourceFile       = "file"
	// SourceHostPort are the hostPorts of this node's pods (one Service
	// per pod, named after it).
	SourceHostPort = "hostport"
)

// frontend is one desired frontend. Its backend list is not kept: the
// writer keeps what it wrote and diffs against it, so an update reads no
// old list; Frontends, Reconcile and RetryFailed compute the lists
// again (lists).
type frontend struct {
	lb    datapath.LBService // Backends nil
	owner svcKey             // the service that has it
	id    uint32
	dirty bool // a write of it failed; the retry writes it again
	// backends counts its backends, remote those of other clusters.
	backends, remote int
}

// svcKey names a service of a source; struct keys, not joined strings,
// so that an update allocates no key.
type svcKey struct{ source, namespace, name string }

// String is source:namespace/name, as the status line names a service.
func (k svcKey) String() string { return k.source + ":" + k.namespace + "/" + k.name }

// keyOf is the key of source's namespacedName ("namespace/name").
func keyOf(source, namespacedName string) svcKey {
	ns, name, _ := strings.Cut(namespacedName, "/")
	return svcKey{source: source, namespace: ns, name: name}
}

// compareKeys orders keys by source, namespace, name.
func compareKeys(a, b svcKey) int {
	return cmp.Or(cmp.Compare(a.source, b.source), cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
}

// entry is one source's service with what the manager derived from it:
// its namespace/name (LBService.Name, computed once) and the frontends
// it has (sorted by address, a subsequence of Desired's output).
type entry struct {
	svc   *Service // nil while its deletion is being written
	name  string
	seq   uint64 // the order entries were made in (allSeq)
	owned []*frontend
	gone  bool // deleted from the manager: a serviceRef to it is stale
	// first is the room of its first frontend (most services have
	// one), ownedRoom that of owned when it was empty: an update then
	// reads one object, not three.
	first     frontend
	firstUsed bool
	ownedRoom [1]*frontend
}

// newFrontend returns a new frontend of e, at k, with id: e.first when
// free.
func (e *entry) newFrontend(k svcKey, id uint32) *frontend {
	if e.firstUsed {
		return &frontend{owner: k, id: id}
	}
	e.firstUsed = true
	e.first = frontend{owner: k, id: id}
	return &e.first
}

// serviceRef takes a manager from a Service to its entry without a
// lookup by name. The Converter gives the Services it makes of one
// Kubernetes Service object one ref; the first manager to upsert one
// claims it (owner) and keeps its entry there, under its lock. Services
// made otherwise have none.
//
// The owner gives back (returned) the Service of the ref that it
// replaces with a newer one of the ref, for the Converter to make the
// next one in. It does not once a Service of the ref went anywhere else
// (pinned): to an observer, to another manager, to another entry.
type serviceRef struct {
	owner    atomic.Pointer[Manager]
	source   string // the owner's, under its lock
	e        *entry
	returned atomic.Pointer[Service]
	pinned   atomic.Bool
}

// pin marks the Services of svc's ref as held somewhere else too.
func pin(svc *Service) {
	if svc != nil && svc.ref != nil {
		svc.ref.pinned.Store(true)
	}
}

// Manager holds the desired frontends of every service and writes their
// changes through a datapath.LBMapWriter. It is safe for concurrent use;
// writes happen in the order of the changes.
type Manager struct {
	mu     sync.Mutex
	log    *slog.Logger
	writer datapath.LBMapWriter // nil: compute only
	node   Node
	// opts switch parts of the frontends off (SetSourceRangeCheck,
	// SetExternalIPs).
	opts     options
	services map[svcKey]*entry
	remote   map[svcKey][]Backend            // {"", namespace, name} -> remote clusters' backends
	desired  map[datapath.L3n4Addr]*frontend // frontend -> its LBService
	// desiredMu is held, with mu, to change desired (not its
	// frontends): ServiceAt reads it under desiredMu alone, so that it
	// never waits for a map write.
	desiredMu sync.RWMutex
	lost      map[datapath.L3n4Addr][]svcKey // frontend -> services that want it too
	nextID    uint32
	nextSeq   uint64
	stats     Stats
	// arena holds the backend lists of the Desired call of recompute,
	// handed to the writer (which copies what it keeps).
	arena []datapath.LBBackend
	// want is recompute's room for the frontends Desired returns (nil
	// while a recompute uses it: a nested one, handOver's, makes its
	// own).
	want []datapath.LBService
	// writerChanges is the writer's Changes count after the last write.
	writerChanges uint64
	now           func() time.Time

	// health are the services with a health-check NodePort (few), for
	// HealthChecks; healthChanged is signalled when one changes.
	health        map[svcKey]bool
	healthChanged chan struct{}

	// notifyMu serialises the changes of services with their delivery
	// to the observers (Observe), in order.
	notifyMu  sync.Mutex
	observers []observer
	changes   []Change // recorded under mu, delivered by notify
}

// New returns a manager writing through w (nil: it computes the desired
// frontends, for the API, and writes nothing).
func New(w datapath.LBMapWriter, node Node, log *slog.Logger) *Manager {
	return &Manager{log: log, writer: w, node: node, now: time.Now,
		services: map[svcKey]*entry{}, remote: map[svcKey][]Backend{},
		desired: map[datapath.L3n4Addr]*frontend{}, lost: map[datapath.L3n4Addr][]svcKey{},
		health: map[svcKey]bool{}, healthChanged: make(chan struct{}, 1)}
}

// HasWriter reports whether the manager writes to a datapath.
func (m *Manager) HasWriter() bool { return m.writer != nil }

// Upsert sets the service of source (SourceKubernetes or SourceFile) at
// svc.NamespacedName() and writes the frontends that changed.
func (m *Manager) Upsert(source string, svc *Service) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	m.set(svcKey{source: source, namespace: svc.Namespace, name: svc.Name}, svc)
	changed := len(m.changes) > 0
	m.mu.Unlock()
	if changed {
		m.notify()
	}
}

// set makes svc (nil: none) the service at k and writes what changed;
// m.mu is held.
func (m *Manager) set(k svcKey, svc *Service) {
	e := m.entryOf(k, svc)
	if e == nil {
		if svc == nil {
			return
		}
		m.nextSeq++
		e = &entry{name: k.namespace + "/" + k.name, seq: m.nextSeq}
		m.services[k] = e
		m.claim(k, svc, e)
	}
	old := e.svc
	m.record(k, old, svc)
	e.svc = svc
	if svc != nil && svc.HealthCheckNodePort != 0 || len(m.health) > 0 && m.health[k] {
		m.healthSet(k, svc)
	}
	m.recompute(k, e)
	if svc == nil {
		delete(m.services, k)
		e.gone = true
		return
	}
	if r := svc.ref; r != nil && old != nil && old != svc && old.ref == r && r.e == e && r.owner.Load() == m && !r.pinned.Load() {
		r.returned.Store(old) // nothing here reads old any more
	}
}

// entryOf returns the entry at k (nil: none): the one svc's ref points
// to when this manager claimed the ref for k's source, else the one in
// m.services (which the ref then points to). m.mu is held.
func (m *Manager) entryOf(k svcKey, svc *Service) *entry {
	if svc != nil && svc.ref != nil && svc.ref.owner.Load() == m && svc.ref.source == k.source &&
		svc.ref.e != nil && !svc.ref.e.gone {
		return svc.ref.e
	}
	e := m.services[k]
	if e != nil {
		m.claim(k, svc, e)
	}
	return e
}

// claim points svc's ref to e, the entry at k, when the ref is this
// manager's or nobody's.
func (m *Manager) claim(k svcKey, svc *Service, e *entry) {
	if svc == nil || svc.ref == nil {
		return
	}
	r := svc.ref
	if r.owner.Load() != m && !r.owner.CompareAndSwap(nil, m) {
		r.pinned.Store(true) // another manager's: both hold its Services
		return
	}
	if r.e != nil && r.e != e && !r.e.gone {
		r.pinned.Store(true) // another entry (source) holds one too
	}
	r.source, r.e = k.source, e
}

// Delete removes source's service namespacedName and its frontends.
func (m *Manager) Delete(source, namespacedName string) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	m.set(keyOf(source, namespacedName), nil)
	m.mu.Unlock()
	m.notify()
}

// Replace makes svcs the whole set of source's services (a state file
// read again).
func (m *Manager) Replace(source string, svcs []*Service) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	keep := map[svcKey]bool{}
	for _, s := range svcs {
		k := svcKey{source: source, namespace: s.Namespace, name: s.Name}
		keep[k] = true
		m.set(k, s)
	}
	for _, k := range m.sortedKeys() {
		if k.source == source && !keep[k] {
			m.set(k, nil)
		}
	}
	m.mu.Unlock()
	m.notify()
}

// sortedKeys returns the services' keys in order; m.mu is held.
func (m *Manager) sortedKeys() []svcKey {
	return slices.SortedFunc(maps.Keys(m.services), compareKeys)
}

// SetRemoteBackends sets the backends the remote clusters share for the
// global service namespacedName (none: nil) and rewrites its frontends.
func (m *Manager) SetRemoteBackends(namespacedName string, bes []Backend) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rk := keyOf("", namespacedName)
	if len(bes) == 0 {
		delete(m.remote, rk)
	} else {
		m.remote[rk] = bes
	}
	for _, src := range []string{SourceKubernetes, SourceFile} {
		k := rk
		k.source = src
		if e := m.services[k]; e != nil {
			m.recompute(k, e)
		}
	}
}

// SetNode changes this node (name, zone, NodePort addresses) and
// rewrites what depends on it: every service when the name or the zone
// changed (which backends are local, or in the zone), else the services
// with NodePort frontends (the node's addresses are theirs).
func (m *Manager) SetNode(n Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	renamed := n.Name != m.node.Name || n.Zone != m.node.Zone // which backends are local, or in the zone
	if !renamed && slices.Equal(n.Addrs, m.node.Addrs) {
		return
	}
	m.node = n
	if renamed && len(m.health) > 0 {
		m.signalHealth() // which endpoints are local
	}
	for _, k := range m.sortedKeys() {
		if e := m.services[k]; renamed || hasNodePort(e.svc) {
			m.recompute(k, e)
		}
	}
}

// SetSourceRangeCheck makes the LoadBalancer frontends carry their
// Services' source ranges (loadBalancerSourceRanges), the default, or
// not (Cilium's --enable-svc-source-range-check=false: the cloud load
// balancer enforces them, and the clients' addresses may not reach the
// node), and rewrites the services that have ranges.
func (m *Manager) SetSourceRangeCheck(enabled bool) {
	m.setOption(&m.opts.noRangeCheck, !enabled, func(s *Service) bool { return len(s.SourceRanges) > 0 })
}

// SetExternalIPs makes the Services' spec.externalIPs frontends (the
// default), or not (Cilium's --enable-external-ips=false: an external
// IP any Service may claim is how CVE-2020-8554 intercepts traffic), and
// rewrites the services that have some.
func (m *Manager) SetExternalIPs(enabled bool) {
	m.setOption(&m.opts.noExternalIPs, !enabled, func(s *Service) bool {
		return slices.ContainsFunc(s.Frontends, func(fe Frontend) bool { return fe.Type == datapath.SVCTypeExternalIP })
	})
}

// setOption sets *opt to v and computes again the services affects says
// it changes.
func (m *Manager) setOption(opt *bool, v bool, affects func(*Service) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if *opt == v {
		return
	}
	*opt = v
	for _, k := range m.sortedKeys() {
		if e := m.services[k]; e.svc != nil && affects(e.svc) {
			m.recompute(k, e)
		}
	}
}

// hasNodePort reports whether svc has a NodePort frontend of the
// unspecified address (which Desired expands to the node's addresses).
func hasNodePort(svc *Service) bool {
	return svc != nil && slices.ContainsFunc(svc.Frontends, func(fe Frontend) bool {
		return nodeBound(fe) && fe.Addr.Addr.IsUnspecified()
	})
}

// recompute computes the frontends of e, the service at k, again and
// hands each to the writer, which writes what changed; m.mu is held. A
// frontend e already has is found by a walk of both sorted lists, not in
// m.desired, and nothing is allocated for the frontends it keeps: a
// one-endpoint change costs the Desired call and the writer's diff.
func (m *Manager) recompute(k svcKey, e *entry) {
	var want []datapath.LBService
	if e.svc != nil {
		m.arena = m.arena[:0]
		want = desired(e.svc, e.name, m.remoteOf(k), m.node, m.want, &m.arena, m.opts)
		m.want = nil
		defer func() { m.want = want[:0] }()
	}
	// owned is e.owned while the frontends kept are its prefix; a copy
	// from the first difference on.
	var owned []*frontend
	same, copied, p := 0, false, 0
	for i := range want {
		lb := &want[i]
		fe := ownedAt(e.owned, &p, lb.Frontend)
		if fe == nil {
			if other := m.desired[lb.Frontend]; other != nil {
				if !slices.Contains(m.lost[lb.Frontend], k) {
					m.lost[lb.Frontend] = append(m.lost[lb.Frontend], k)
					m.log.Warn("Frontend already served by another service; skipped",
						"frontend", lb.Frontend.String(), "service", k.String(), "owner", other.owner.String())
				}
				continue
			}
		}
		switch {
		case !copied && same < len(e.owned) && e.owned[same] == fe && fe != nil:
			same++
		case !copied:
			if len(e.owned) == 0 && len(want) <= len(e.ownedRoom) {
				owned = e.ownedRoom[:0]
			} else {
				owned = append(make([]*frontend, 0, len(want)), e.owned[:same]...)
			}
			copied = true
			fallthrough
		default:
			if fe == nil {
				m.nextID++
				fe = e.newFrontend(k, m.nextID)
				m.desiredMu.Lock()
				m.desired[lb.Frontend] = fe
				m.desiredMu.Unlock()
			}
			owned = append(owned, fe)
		}
		fe.lb = *lb
		fe.lb.Backends = nil // the arena's
		fe.backends, fe.remote = len(lb.Backends), 0
		for i := range lb.Backends {
			if lb.Backends[i].ClusterID != 0 {
				fe.remote++
			}
		}
		m.upsert(fe, *lb)
	}
	if !copied {
		owned = e.owned[:same]
	}
	old := e.owned
	e.owned = owned
	for _, fe := range old {
		if !has(owned, fe.lb.Frontend) {
			addr := fe.lb.Frontend
			m.desiredMu.Lock()
			delete(m.desired, addr)
			m.desiredMu.Unlock()
			if fe == &e.first {
				e.firstUsed = false
			}
			m.remove(addr)
			m.handOver(addr)
		}
	}
	if len(m.lost) > 0 {
		m.dropLost(k, want, owned)
	}
}

// has reports whether the frontends fes, sorted by address, hold a.
func has(fes []*frontend, a datapath.L3n4Addr) bool {
	_, ok := slices.BinarySearchFunc(fes, a, func(fe *frontend, a datapath.L3n4Addr) int { return compareAddr(fe.lb.Frontend, a) })
	return ok
}

// handOver gives a freed frontend to the next service that wanted it;
// the others keep waiting.
func (m *Manager) handOver(addr datapath.L3n4Addr) {
	waiting := m.lost[addr]
	delete(m.lost, addr)
	for i, k := range waiting {
		if e := m.services[k]; e != nil && e.svc != nil {
			if rest := waiting[i+1:]; len(rest) > 0 {
				m.lost[addr] = slices.Clone(rest)
			}
			m.recompute(k, e)
			return
		}
	}
}

// dropLost forgets that k wants frontends it no longer wants, or now has
// (want sorted by frontend, owned a subsequence of it).
func (m *Manager) dropLost(k svcKey, want []datapath.LBService, owned []*frontend) {
	for addr, ks := range m.lost {
		_, wanted := slices.BinarySearchFunc(want, addr, func(lb datapath.LBService, a datapath.L3n4Addr) int { return compareAddr(lb.Frontend, a) })
		if wanted && !has(owned, addr) {
			continue
		}
		if i := slices.Index(ks, k); i >= 0 {
			m.lost[addr] = slices.Delete(ks, i, i+1)
			if len(m.lost[addr]) == 0 {
				delete(m.lost, addr)
			}
		}
	}
}

// upsert writes fe, whose backends are lb's, when the initial reconcile
// is done.
func (m *Manager) upsert(fe *frontend, lb datapath.LBService) {
	fe.dirty = false
	if m.writer == nil || !m.stats.Reconciled {
		return
	}
	err := m.writer.UpsertService(lb)
	wrote := m.wrote()
	if err != nil {
		fe.dirty = true
		m.failed(fmt.Errorf("upsert service %s (%s): %w", lb.Frontend, lb.Name, err))
		return
	}
	if wrote {
		m.stats.Upserts++
	}
}

// lists appends to out the frontends the service at k has, with their
// backend lists: Desired's output for the frontends it owns (e.owned,
// a subsequence of it), the lists appended to *arena (nil: each its
// own). m.mu is held.
func (m *Manager) lists(k svcKey, e *entry, out []datapath.LBService, arena *[]datapath.LBBackend) []datapath.LBService {
	if e == nil || e.svc == nil || len(e.owned) == 0 {
		return out
	}
	start := len(out)
	out = desired(e.svc, e.name, m.remoteOf(k), m.node, out, arena, m.opts)
	kept, p := out[start:start], 0
	for _, lb := range out[start:] {
		if ownedAt(e.owned, &p, lb.Frontend) != nil {
			kept = append(kept, lb)
		}
	}
	return out[:start+len(kept)]
}

// remoteOf returns the remote clusters' backends of the service at k.
func (m *Manager) remoteOf(k svcKey) []Backend {
	return m.remote[svcKey{namespace: k.namespace, name: k.name}]
}

// ownedAt returns the frontend of owned (sorted by address) at a, nil
// if none; *p is where the last call stopped, so that a walk of
// ascending addresses reads owned once.
func ownedAt(owned []*frontend, p *int, a datapath.L3n4Addr) *frontend {
	for *p < len(owned) && compareAddr(owned[*p].lb.Frontend, a) < 0 {
		*p++
	}
	if *p < len(owned) && owned[*p].lb.Frontend == a {
		return owned[*p]
	}
	return nil
}

// remove deletes a frontend from the datapath.
func (m *Manager) remove(addr datapath.L3n4Addr) {
	if m.writer == nil || !m.stats.Reconciled {
		return
	}
	err := m.writer.DeleteService(addr)
	wrote := m.wrote()
	if err != nil {
		m.stats.pendingDeletes = append(m.stats.pendingDeletes, addr)
		m.failed(fmt.Errorf("delete service %s: %w", addr, err))
		return
	}
	if wrote {
		m.stats.Deletes++
	}
}

// wrote reports whether the writer changed the maps since the last
// call (its Changes count moved; the manager is its only user).
func (m *Manager) wrote() bool {
	n := m.writer.Changes()
	moved := n != m.writerChanges
	m.writerChanges = n
	return moved
}

func (m *Manager) failed(err error) {
	m.stats.LastError, m.stats.LastErrorTime = err, m.now()
	if m.stats.PendingSince.IsZero() {
		m.stats.PendingSince = m.stats.LastErrorTime
	}
	m.stats.Failures++
	m.log.Warn("Unable to write the load-balancing maps", "error", err)
}
