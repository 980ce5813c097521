package endpoint

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy"
)

// regenerate resolves the endpoint's policy at the repository's current
// revision, writes its map state and (re)attaches its programs when the
// enforcement changed. On an error the datapath keeps the previous
// policy; the endpoint's state says what failed.
func (m *Manager) regenerate(ctx context.Context, ep *endpoint) error {
	m.setState(ep, StateRegenerating)
	err := m.regenerateSteps(ctx, ep)
	m.update(ep, func(e *Endpoint) {
		if err != nil {
			e.State, e.Error = StateNotReady, err.Error()
		} else {
			e.State, e.Error = StateReady, ""
		}
	})
	return err
}

func (m *Manager) regenerateSteps(ctx context.Context, ep *endpoint) error {
	rev := m.p.Policy.Revision()
	sp := m.p.Policy.Resolve(ep.ident)
	epp := sp.DistillPolicy(ep.snap.NamedPorts)
	epp.ConsumeMapChanges() // MapState below holds them
	ms := epp.MapState()
	if m.p.PolicyMaps != nil {
		// The map is pinned once a write was tried, even one that failed
		// (too many keys): teardown must remove it.
		ep.mapWritten = true
		if _, _, err := m.p.PolicyMaps.SyncPolicyMap(ep.snap.ID, ms); err != nil {
			epp.Detach()
			return fmt.Errorf("write policy map: %w", err)
		}
	}
	if old := ep.policy; old != nil {
		old.Detach()
	}
	ep.policy = epp
	// Enforcement is on where a rule isolates the endpoint, and also where
	// it only has deny rules: with it off the programs let every flow pass.
	ingress := datapath.PolicyEnforced(ms, policy.Ingress, sp.DefaultDeny(policy.Ingress))
	egress := datapath.PolicyEnforced(ms, policy.Egress, sp.DefaultDeny(policy.Egress))
	if m.p.Policy.EnforcementMode() == policy.EnforceNever { // --enable-policy=never
		ingress, egress = false, false
	}
	m.update(ep, func(e *Endpoint) { e.PolicyRevision, e.PolicyKeys = rev, len(ms) })
	if ep.attached && ingress == ep.snap.IngressEnforcement && egress == ep.snap.EgressEnforcement {
		return nil
	}
	if m.p.Loader != nil {
		m.mu.RLock()
		spec := datapath.EndpointSpec{ID: ep.snap.ID, IfIndex: ep.snap.HostIfIndex, IfName: ep.snap.HostIfName,
			Identity: ep.ident.ID, IPv4: ep.snap.IPv4, IPv6: ep.snap.IPv6,
			IngressEnforcement: ingress, EgressEnforcement: egress, PolicyAudit: m.p.Policy.AuditMode()}
		m.mu.RUnlock()
		ep.attached = false // a failed replace may have detached
		if err := m.p.Loader.Attach(ctx, spec); err != nil {
			return fmt.Errorf("attach programs: %w", err)
		}
	}
	ep.attached = true
	m.update(ep, func(e *Endpoint) { e.IngressEnforcement, e.EgressEnforcement = ingress, egress })
	return nil
}

// Regenerate regenerates every endpoint with an identity: the
// subscriber of the policy cell's regeneration requests. Failures are
// recorded per endpoint (state not-ready, Error) and do not stop the
// others; it returns nil, as retrying cannot fix them before the next
// policy change.
func (m *Manager) Regenerate(ctx context.Context, reasons []string) error {
	m.ops.Lock()
	defer m.ops.Unlock()
	failed := 0
	eps := m.withIdentity()
	for _, ep := range eps {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := m.regenerate(ctx, ep); err != nil {
			failed++
			m.p.Log.Warn("Endpoint regeneration failed", "endpoint", ep.snap.ID, "error", err)
		}
	}
	m.p.Log.Info("Regenerated endpoints", "endpoints", len(eps), "failed", failed, "reasons", reasons)
	return nil
}

// withIdentity returns the endpoints that have an identity, by id
// (m.ops held).
func (m *Manager) withIdentity() []*endpoint {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*endpoint
	for _, id := range slices.Sorted(maps.Keys(m.eps)) {
		if ep := m.eps[id]; ep.ident != nil && ep.snap.State != StateDisconnecting {
			out = append(out, ep)
		}
	}
	return out
}

// ApplyIncremental writes the map-state changes that identity changes
// made to each endpoint's policy since its last regeneration or the
// last call, without a full regeneration. An endpoint whose changes are
// refused is marked not-ready and regenerated in full.
func (m *Manager) ApplyIncremental(ctx context.Context) error {
	m.ops.Lock()
	defer m.ops.Unlock()
	for _, ep := range m.withIdentity() {
		if ep.policy == nil {
			continue
		}
		ch := ep.policy.ConsumeMapChanges()
		if ch.Len() == 0 || m.p.PolicyMaps == nil {
			continue
		}
		if err := m.p.PolicyMaps.ApplyPolicyMapChanges(ep.snap.ID, ch); err != nil {
			m.p.Log.Warn("Incremental policy map update failed; regenerating", "endpoint", ep.snap.ID, "error", err)
			_ = m.regenerate(ctx, ep)
			continue
		}
		if m.addsUnenforcedDeny(ep, ch) {
			// The first deny key in a direction without enforcement: the
			// programs must start looking the map up.
			_ = m.regenerate(ctx, ep)
			continue
		}
		m.update(ep, func(e *Endpoint) { e.PolicyKeys = ep.policy.Len() })
	}
	return nil
}

// addsUnenforcedDeny reports whether ch adds a deny key in a direction
// the endpoint's programs do not enforce yet.
func (m *Manager) addsUnenforcedDeny(ep *endpoint, ch policy.MapChanges) bool {
	m.mu.RLock()
	enforced := [2]bool{ep.snap.IngressEnforcement, ep.snap.EgressEnforcement}
	m.mu.RUnlock()
	for k, e := range ch.Adds {
		if e.Deny && !enforced[dirIndex(k.Direction)] {
			return true
		}
	}
	return false
}

// dirIndex is 0 for ingress, 1 for egress.
func dirIndex(d policy.Direction) int {
	if d == policy.Egress {
		return 1
	}
	return 0
}
