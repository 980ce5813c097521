package svcmanager

import (
	"cmp"
	"net/netip"
	"slices"
)

// HealthCheck is a service's health-check NodePort (Kubernetes'
// spec.healthCheckNodePort of a LoadBalancer Service with
// externalTrafficPolicy Local) and how many of its endpoints are on this
// node and ready: the node's answer to the load balancer's probe, which
// sends the service's traffic only to nodes with local endpoints.
type HealthCheck struct {
	Namespace, Name string
	Port            uint16
	// LocalEndpoints counts the service's ready endpoints (addresses) on
	// this node: those the datapath keeps for its Local frontends (a
	// backend of no known node counts as local, as there).
	LocalEndpoints int
}

// HealthChecks returns the health checks of the services the manager
// holds (every source's), sorted by port.
func (m *Manager) HealthChecks() []HealthCheck {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]HealthCheck, 0, len(m.health))
	for k := range m.health {
		e := m.services[k]
		if e == nil || e.svc == nil || e.svc.HealthCheckNodePort == 0 {
			continue
		}
		out = append(out, HealthCheck{Namespace: k.namespace, Name: k.name, Port: e.svc.HealthCheckNodePort,
			LocalEndpoints: localReady(e.svc, m.node.Name)})
	}
	slices.SortFunc(out, func(a, b HealthCheck) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// HealthChanged receives (one pending signal at most) when a service
// with a health-check NodePort changed, came or went, or the node was
// renamed: HealthChecks may then return something else.
func (m *Manager) HealthChanged() <-chan struct{} { return m.healthChanged }

// healthSet notes that the service at k is now svc (nil: gone), which
// has or had a health-check NodePort; m.mu is held.
func (m *Manager) healthSet(k svcKey, svc *Service) {
	if svc != nil && svc.HealthCheckNodePort != 0 {
		m.health[k] = true
	} else {
		delete(m.health, k)
	}
	m.signalHealth()
}

func (m *Manager) signalHealth() {
	select {
	case m.healthChanged <- struct{}{}:
	default:
	}
}

// localReady counts the distinct addresses of svc's ready backends on
// node (or of no known node).
func localReady(svc *Service, node string) int {
	seen := map[netip.Addr]bool{}
	for _, be := range svc.Backends {
		if be.Condition == Ready && (be.NodeName == "" || be.NodeName == node) {
			seen[be.Addr.Addr] = true
		}
	}
	return len(seen)
}
