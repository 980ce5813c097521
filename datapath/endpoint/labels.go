package endpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// UpdateLabels gives endpoint id new labels: it allocates their identity,
// points the endpoint's addresses at it in the ipcache, regenerates the
// endpoint's policy, writes its state and releases the old identity. It
// reports whether anything changed; the same labels change nothing. On
// an error before the regeneration the endpoint keeps its old labels and
// identity. A restored endpoint still waiting for its identity just
// takes the labels: its identity, when restored, is theirs.
func (m *Manager) UpdateLabels(ctx context.Context, id datapath.EndpointID, ls labels.Labels) (bool, error) {
	if len(ls) == 0 {
		return false, fmt.Errorf("update labels of endpoint %d: %w", id, fieldErr("labels", "empty: an endpoint needs labels for its identity"))
	}
	if err := labels.CheckEndpointLabels(ls, m.p.ClusterName); err != nil {
		return false, fmt.Errorf("update labels of endpoint %d: %w", id, &FieldError{Field: "labels", Err: err})
	}
	m.ops.Lock()
	defer m.ops.Unlock()
	m.mu.RLock()
	ep, ok := m.eps[id]
	m.mu.RUnlock()
	if !ok {
		return false, fmt.Errorf("update labels of endpoint %d: %w", id, ErrNotFound)
	}
	ls = withNamedPortsLabels(ls, ep.snap.NamedPorts)
	if ep.snap.Labels.Equal(ls) {
		return false, nil
	}
	if ep.ident == nil && ep.snap.State == StateWaitingForIdentity {
		// Restored, its identity not allocated yet: RestoreIdentities
		// allocates the identity of these labels.
		m.update(ep, func(e *Endpoint) { e.Labels = ls })
		if err := m.writeState(ep); err != nil {
			return true, fmt.Errorf("update labels of endpoint %d: %w", id, err)
		}
		m.p.Log.Info("Restored endpoint labels changed before its identity", "endpoint", id)
		return true, nil
	}
	if ep.ident == nil {
		return false, fmt.Errorf("update labels of endpoint %d: waiting for its identity", id)
	}
	old := ep.ident
	ident, _, err := m.p.Identities.AllocateIdentity(ctx, ls)
	if err != nil {
		return false, fmt.Errorf("update labels of endpoint %d: allocate identity: %w", id, err)
	}
	ep.ident = ident
	m.update(ep, func(e *Endpoint) { e.Labels, e.Identity = ls, ident.ID })
	var errs []error
	if err := m.upsertIPCache(ep); err != nil {
		errs = append(errs, err)
	}
	if err := m.regenerate(ctx, ep); err != nil {
		errs = append(errs, err)
	}
	if err := m.writeState(ep); err != nil {
		errs = append(errs, err)
	}
	if _, err := m.p.Identities.Release(ctx, old); err != nil {
		errs = append(errs, fmt.Errorf("release identity %d: %w", old.ID, err))
	}
	m.p.Log.Info("Endpoint labels changed", "endpoint", id, "identity", ident.ID, "old-identity", old.ID)
	if len(errs) > 0 {
		return true, fmt.Errorf("update labels of endpoint %d: %w", id, errors.Join(errs...))
	}
	return true, nil
}

// withNamedPortsLabels adds the generated named-ports identity labels of
// ports to ls, as Cilium's agent does for a pod: replicas that number a
// port name differently get different identities.
func withNamedPortsLabels(ls labels.Labels, ports []policyapi.NamedPort) labels.Labels {
	gen := policyapi.NamedPortsIdentityLabels(ports)
	if len(gen) == 0 {
		return ls
	}
	return ls.With(gen...)
}
