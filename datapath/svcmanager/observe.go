package svcmanager

import (
	"reflect"
	"slices"
)

// Change is a change of one source's service: Service is the new one,
// nil when it was deleted.
type Change struct {
	Source         string
	NamespacedName string
	Service        *Service
}

// observer is an Observe callback with the sources it follows (none:
// all).
type observer struct {
	fn      func(Change)
	sources []string
}

func (o observer) follows(source string) bool {
	return len(o.sources) == 0 || slices.Contains(o.sources, source)
}

// Observe calls fn with every service the manager holds now, then with
// every later change of a service (Upsert, Delete, Replace; a service
// replaced by an equal one is no change), in order, of the sources
// named (none: of every source). fn runs outside the manager's lock, so
// it may call the manager (as the global service cache's subscribers do
// through SetRemoteBackends), but not Upsert, Delete, Replace or
// Observe. The publisher of this cluster's global services
// (clustermesh/service/svcpublish) observes SourceFile: a change of a
// source nobody observes costs no comparison.
func (m *Manager) Observe(fn func(Change), sources ...string) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	o := observer{fn: fn, sources: sources}
	m.observers = append(m.observers, o)
	var now []Change
	for _, k := range m.sortedKeys() {
		if o.follows(k.source) {
			svc := m.services[k].svc
			pin(svc) // the observer may keep it
			now = append(now, changeOf(k, svc))
		}
	}
	m.mu.Unlock()
	for _, c := range now {
		fn(c)
	}
}

// changeOf is the change that sets the service at k to svc.
func changeOf(k svcKey, svc *Service) Change {
	return Change{Source: k.source, NamespacedName: k.namespace + "/" + k.name, Service: svc}
}

// record notes a change of the service at k from old to svc (nil:
// deleted) for the observers that follow its source; m.mu is held.
func (m *Manager) record(k svcKey, old, svc *Service) {
	if (old == nil && svc == nil) || !slices.ContainsFunc(m.observers, func(o observer) bool { return o.follows(k.source) }) ||
		reflect.DeepEqual(old, svc) {
		return
	}
	pin(svc) // the observers may keep it
	m.changes = append(m.changes, changeOf(k, svc))
}

// notify hands the recorded changes to the observers that follow their
// source; m.notifyMu is held and m.mu is not.
func (m *Manager) notify() {
	m.mu.Lock()
	if len(m.changes) == 0 {
		m.mu.Unlock()
		return
	}
	changes, observers := m.changes, slices.Clone(m.observers)
	m.changes = nil
	m.mu.Unlock()
	for _, c := range changes {
		for _, o := range observers {
			if o.follows(c.Source) {
				o.fn(c)
			}
		}
	}
}
