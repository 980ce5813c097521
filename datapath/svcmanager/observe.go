package svcmanager

import (
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Change is a change of one source's service: Service is the new one,
// nil when it was deleted.
type Change struct {
	Source         string
	NamespacedName string
	Service        *Service
}

// Observe calls fn with every service the manager holds now, then with
// every later change of a service of any source (Upsert, Delete,
// Replace; a service replaced by an equal one is no change), in order.
// fn runs outside the manager's lock, so it may call the manager (as the
// global service cache's subscribers do through SetRemoteBackends), but
// not Upsert, Delete, Replace or Observe. The publisher of this
// cluster's global services (clustermesh/service/svcpublish) observes
// the sources without Kubernetes.
func (m *Manager) Observe(fn func(Change)) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.mu.Lock()
	m.observers = append(m.observers, fn)
	now := make([]Change, 0, len(m.services))
	for _, k := range slices.Sorted(maps.Keys(m.services)) {
		now = append(now, changeOf(k, m.services[k]))
	}
	m.mu.Unlock()
	for _, c := range now {
		fn(c)
	}
}

// changeOf is the change that sets the service at key k to svc.
func changeOf(k string, svc *Service) Change {
	source, nn, _ := strings.Cut(k, ":")
	return Change{Source: source, NamespacedName: nn, Service: svc}
}

// record notes a change of the service at k from old to svc (nil:
// deleted) for the observers; m.mu is held.
func (m *Manager) record(k string, old, svc *Service) {
	if len(m.observers) == 0 || (old == nil && svc == nil) || reflect.DeepEqual(old, svc) {
		return
	}
	m.changes = append(m.changes, changeOf(k, svc))
}

// notify hands the recorded changes to the observers; m.notifyMu is held
// and m.mu is not.
func (m *Manager) notify() {
	m.mu.Lock()
	changes, observers := m.changes, slices.Clone(m.observers)
	m.changes = nil
	m.mu.Unlock()
	for _, c := range changes {
		for _, fn := range observers {
			fn(c)
		}
	}
}
