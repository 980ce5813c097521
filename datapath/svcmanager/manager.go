package svcmanager

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apiary-net/apiary/datapath"
)

// Source names, the origin of a service (SetRemoteBackends looks a
// service up under each).
const (
	SourceKubernetes = "k8s"
	SourceFile       = "file"
)

// frontend is one desired frontend.
type frontend struct {
	lb    datapath.LBService
	owner string // the service's key
	id    uint32
	dirty bool // a write of it failed; the retry writes it again
}

// Manager holds the desired frontends of every service and writes their
// changes through a datapath.LBMapWriter. It is safe for concurrent use;
// writes happen in the order of the changes.
type Manager struct {
	mu       sync.Mutex
	log      *slog.Logger
	writer   datapath.LBMapWriter // nil: compute only
	node     Node
	services map[string]*Service             // source:namespace/name -> service
	owned    map[string][]datapath.L3n4Addr  // source:namespace/name -> its frontends
	remote   map[string][]Backend            // namespace/name -> remote clusters' backends
	desired  map[datapath.L3n4Addr]*frontend // frontend -> its LBService
	lost     map[datapath.L3n4Addr][]string  // frontend -> keys of services that want it too
	nextID   uint32
	stats    Stats
	now      func() time.Time

	// notifyMu serialises the changes of services with their delivery
	// to the observers (Observe), in order.
	notifyMu  sync.Mutex
	observers []func(Change)
	changes   []Change // recorded under mu, delivered by notify
}

// New returns a manager writing through w (nil: it computes the desired
// frontends, for the API, and writes nothing).
func New(w datapath.LBMapWriter, node Node, log *slog.Logger) *Manager {
	return &Manager{log: log, writer: w, node: node, now: time.Now,
		services: map[string]*Service{}, owned: map[string][]datapath.L3n4Addr{},
		remote: map[string][]Backend{}, desired: map[datapath.L3n4Addr]*frontend{},
		lost: map[datapath.L3n4Addr][]string{}}
}

// HasWriter reports whether the manager writes to a datapath.
func (m *Manager) HasWriter() bool { return m.writer != nil }

func key(source, namespacedName string) string { return source + ":" + namespacedName }

// Upsert sets the service of source (SourceKubernetes or SourceFile) at
// svc.NamespacedName() and writes the frontends that changed.
func (m *Manager) Upsert(source string, svc *Service) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	k := key(source, svc.NamespacedName())
	m.record(k, m.services[k], svc)
	m.services[k] = svc
	m.recompute(k)
	m.mu.Unlock()
	m.notify()
}

// Delete removes source's service namespacedName and its frontends.
func (m *Manager) Delete(source, namespacedName string) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	k := key(source, namespacedName)
	old, ok := m.services[k]
	if !ok {
		m.mu.Unlock()
		return
	}
	m.record(k, old, nil)
	delete(m.services, k)
	m.recompute(k)
	m.mu.Unlock()
	m.notify()
}

// Replace makes svcs the whole set of source's services (a state file
// read again).
func (m *Manager) Replace(source string, svcs []*Service) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	keep := map[string]bool{}
	for _, s := range svcs {
		k := key(source, s.NamespacedName())
		keep[k] = true
		m.record(k, m.services[k], s)
		m.services[k] = s
		m.recompute(k)
	}
	for _, k := range slices.Sorted(maps.Keys(m.services)) {
		if strings.HasPrefix(k, source+":") && !keep[k] {
			m.record(k, m.services[k], nil)
			delete(m.services, k)
			m.recompute(k)
		}
	}
	m.mu.Unlock()
	m.notify()
}

// SetRemoteBackends sets the backends the remote clusters share for the
// global service namespacedName (none: nil) and rewrites its frontends.
func (m *Manager) SetRemoteBackends(namespacedName string, bes []Backend) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(bes) == 0 {
		delete(m.remote, namespacedName)
	} else {
		m.remote[namespacedName] = bes
	}
	for _, src := range []string{SourceKubernetes, SourceFile} {
		if k := key(src, namespacedName); m.services[k] != nil {
			m.recompute(k)
		}
	}
}

// SetNode changes this node (name, NodePort addresses) and rewrites what
// depends on it.
func (m *Manager) SetNode(n Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n.Name == m.node.Name && slices.Equal(n.Addrs, m.node.Addrs) {
		return
	}
	m.node = n
	for _, k := range slices.Sorted(maps.Keys(m.services)) {
		m.recompute(k)
	}
}

// recompute computes the frontends of the service at k again and writes
// those that changed; m.mu is held.
func (m *Manager) recompute(k string) {
	var want []datapath.LBService
	if svc, ok := m.services[k]; ok {
		want = Desired(svc, m.remote[svc.NamespacedName()], m.node)
	}
	keep := map[datapath.L3n4Addr]bool{}
	wanted := map[datapath.L3n4Addr]bool{}
	var owned []datapath.L3n4Addr
	for _, lb := range want {
		wanted[lb.Frontend] = true
		fe := m.desired[lb.Frontend]
		if fe != nil && fe.owner != k {
			if !slices.Contains(m.lost[lb.Frontend], k) {
				m.lost[lb.Frontend] = append(m.lost[lb.Frontend], k)
				m.log.Warn("Frontend already served by another service; skipped",
					"frontend", lb.Frontend.String(), "service", k, "owner", fe.owner)
			}
			continue
		}
		keep[lb.Frontend] = true
		owned = append(owned, lb.Frontend)
		if fe == nil {
			m.nextID++
			fe = &frontend{owner: k, id: m.nextID}
			m.desired[lb.Frontend] = fe
		} else if !fe.dirty && Equal(fe.lb, lb) {
			continue
		}
		fe.lb = lb
		m.upsert(fe)
	}
	for _, addr := range m.owned[k] {
		if !keep[addr] {
			delete(m.desired, addr)
			m.remove(addr)
			m.handOver(addr)
		}
	}
	m.dropLost(k, wanted, keep)
	if len(owned) == 0 {
		delete(m.owned, k)
	} else {
		m.owned[k] = owned
	}
}

// handOver gives a freed frontend to the next service that wanted it;
// the others keep waiting.
func (m *Manager) handOver(addr datapath.L3n4Addr) {
	waiting := m.lost[addr]
	delete(m.lost, addr)
	for i, k := range waiting {
		if _, ok := m.services[k]; ok {
			if rest := waiting[i+1:]; len(rest) > 0 {
				m.lost[addr] = slices.Clone(rest)
			}
			m.recompute(k)
			return
		}
	}
}

// dropLost forgets that k wants frontends it no longer has.
func (m *Manager) dropLost(k string, wanted, keep map[datapath.L3n4Addr]bool) {
	for addr, ks := range m.lost {
		if wanted[addr] && !keep[addr] {
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

// upsert writes fe when the initial reconcile is done.
func (m *Manager) upsert(fe *frontend) {
	fe.dirty = false
	if m.writer == nil || !m.stats.Reconciled {
		return
	}
	if err := m.writer.UpsertService(fe.lb); err != nil {
		fe.dirty = true
		m.failed(fmt.Errorf("upsert service %s (%s): %w", fe.lb.Frontend, fe.lb.Name, err))
		return
	}
	m.stats.Upserts++
}

// remove deletes a frontend from the datapath.
func (m *Manager) remove(addr datapath.L3n4Addr) {
	if m.writer == nil || !m.stats.Reconciled {
		return
	}
	if err := m.writer.DeleteService(addr); err != nil {
		m.stats.pendingDeletes = append(m.stats.pendingDeletes, addr)
		m.failed(fmt.Errorf("delete service %s: %w", addr, err))
		return
	}
	m.stats.Deletes++
}

func (m *Manager) failed(err error) {
	m.stats.LastError, m.stats.LastErrorTime = err, m.now()
	m.stats.Failures++
	m.log.Warn("Unable to write the load-balancing maps", "error", err)
}

// Equal reports whether a and b are the same frontend with the same
// backends and settings.
func Equal(a, b datapath.LBService) bool {
	return a.Frontend == b.Frontend && a.Type == b.Type && a.Name == b.Name &&
		a.SessionAffinityTimeout == b.SessionAffinityTimeout && a.LocalOnly == b.LocalOnly &&
		slices.Equal(a.Backends, b.Backends)
}
