package endpoint

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apiary-net/apiary/datapath"
)

// RestoreLocal is the first half of a restore, run at start before the
// API serves: it reads the state files, reserves the restored
// endpoints' addresses in the IPAM, and checks that their veths still
// exist. An endpoint whose veth vanished (its namespace went away while
// the agent was down), or whose addresses cannot be reserved, is
// removed with its state file. Then the IPAM hands out new addresses.
// It returns how many endpoints were restored.
func (m *Manager) RestoreLocal(ctx context.Context) int {
	m.ops.Lock()
	defer m.ops.Unlock()
	defer m.localRestoredOnce.Do(func() { close(m.localRestored) })
	defer m.p.IPAM.RestoreDone()
	if m.p.StateDir == "" {
		return 0
	}
	states, errs := m.readStates(ctx)
	for _, err := range errs {
		m.p.Log.Warn("Skipping endpoint state file", "error", err)
	}
	n := 0
	for _, e := range states {
		if e.State == stateCreating {
			m.undoCreation(ctx, e)
			continue
		}
		if err := m.restoreOne(ctx, e); err != nil {
			m.p.Log.Warn("Endpoint not restored; its state file is deleted", "endpoint", e.ID, "error", err)
			if rerr := m.removeState(e.ID); rerr != nil {
				m.p.Log.Warn("Cannot delete state file", "endpoint", e.ID, "error", rerr)
			}
			continue
		}
		n++
	}
	m.p.Log.Info("Restored endpoints from the state dir", "restored", n, "state-files", len(states)+len(errs))
	return n
}

// restoreOne reserves an endpoint's addresses and checks its veth and
// programs; on an error nothing of it is held.
func (m *Manager) restoreOne(ctx context.Context, e Endpoint) error {
	owner := fmt.Sprintf("endpoint %d", e.ID)
	if e.IPv4.IsValid() {
		if err := m.p.IPAM.AllocateIP(e.IPv4, owner); err != nil {
			return m.dropRestored(ctx, e, fmt.Errorf("reserve IPv4: %w", err))
		}
	}
	if e.IPv6.IsValid() {
		if err := m.p.IPAM.AllocateIP(e.IPv6, owner); err != nil {
			_ = m.p.IPAM.Release(e.IPv4)
			return m.dropRestored(ctx, e, fmt.Errorf("reserve IPv6: %w", err))
		}
	}
	l, err := m.p.Links.LookupEndpointLink(ctx, e.ID)
	if err != nil {
		_ = m.p.IPAM.Release(e.IPv4, e.IPv6)
		if errors.Is(err, datapath.ErrLinkNotFound) {
			// Its pinned links and policy map go too.
			return m.dropRestored(ctx, e, fmt.Errorf("its veth %s vanished: %w", e.ID.HostIfName(), err))
		}
		return err
	}
	if l.IfIndex != e.HostIfIndex {
		m.p.Log.Info("Endpoint veth has a new ifindex", "endpoint", e.ID, "was", e.HostIfIndex, "now", l.IfIndex)
		e.HostIfIndex = l.IfIndex
	}
	if m.p.Loader != nil {
		if err := m.p.Loader.Restore(ctx, e.ID, l.IfIndex); err != nil {
			m.p.Log.Warn("Endpoint programs not attached; attaching at regeneration", "endpoint", e.ID, "error", err)
		}
	}
	e.State, e.Created = StateWaitingForIdentity, time.Now()
	ep := &endpoint{snap: e, linked: true, ipsHeld: true, mapWritten: m.p.PolicyMaps != nil}
	m.mu.Lock()
	m.eps[e.ID] = ep
	m.mu.Unlock()
	m.changed()
	return nil
}

// RestoreIdentities is the second half of a restore, run once the
// global identities are synced: each restored endpoint takes its
// identity again, goes back into the ipcache, and is regenerated
// (attaching its programs with their constants). It returns an error
// (to retry) while some endpoint could not get its identity.
func (m *Manager) RestoreIdentities(ctx context.Context) error {
	if err := m.p.Identities.WaitForInitialGlobalIdentities(ctx); err != nil {
		return fmt.Errorf("wait for identities: %w", err)
	}
	m.ops.Lock()
	defer m.ops.Unlock()
	var errs []error
	for _, ep := range m.waitingForIdentity() {
		was := ep.snap.Identity
		if err := m.allocateIdentity(ctx, ep); err != nil {
			m.update(ep, func(e *Endpoint) { e.Error = err.Error() })
			errs = append(errs, fmt.Errorf("endpoint %d: %w", ep.snap.ID, err))
			continue
		}
		if was != 0 && was != ep.ident.ID {
			m.p.Log.Warn("Restored endpoint has a new identity", "endpoint", ep.snap.ID, "was", was, "now", ep.ident.ID)
		}
		if err := m.upsertIPCache(ep); err != nil {
			m.update(ep, func(e *Endpoint) { e.State, e.Error = StateNotReady, err.Error() })
			m.p.Log.Warn("Restored endpoint not in the ipcache", "endpoint", ep.snap.ID, "error", err)
			continue
		}
		if err := m.regenerate(ctx, ep); err != nil {
			m.p.Log.Warn("Restored endpoint regeneration failed", "endpoint", ep.snap.ID, "error", err)
		}
		if err := m.writeState(ep); err != nil {
			m.p.Log.Warn("Cannot write endpoint state", "endpoint", ep.snap.ID, "error", err)
		}
	}
	if len(errs) == 0 {
		m.restoredOnce.Do(func() { close(m.restored) })
	}
	return errors.Join(errs...)
}

// WaitForLocalRestore waits until RestoreLocal is done: the endpoints
// of the state dir that still exist are the manager's (Endpoints lists
// them with their addresses), the others are dropped.
func (m *Manager) WaitForLocalRestore(ctx context.Context) error {
	select {
	case <-m.localRestored:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the endpoints' restore: %w", context.Cause(ctx))
	}
}

// WaitForRestore waits until every restored endpoint has its identity
// again and its addresses are back in the ipcache (RestoreIdentities
// succeeded once).
func (m *Manager) WaitForRestore(ctx context.Context) error {
	select {
	case <-m.restored:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the endpoints' identities after the restore: %w", context.Cause(ctx))
	}
}

// waitingForIdentity returns the restored endpoints without identity.
func (m *Manager) waitingForIdentity() []*endpoint {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*endpoint
	for _, ep := range m.eps {
		if ep.ident == nil && ep.snap.State == StateWaitingForIdentity {
			out = append(out, ep)
		}
	}
	return out
}

// dropRestored removes what is left in the datapath of an endpoint that
// cannot be restored (its addresses are no longer the node's to give:
// the pod CIDR changed), so that no veth, programs or policy map stay
// behind untracked; it returns cause, with the errors of the removal.
func (m *Manager) dropRestored(ctx context.Context, e Endpoint, cause error) error {
	errs := []error{cause}
	if m.p.Loader != nil {
		errs = append(errs, m.p.Loader.Detach(ctx, e.ID))
	}
	if m.p.PolicyMaps != nil {
		errs = append(errs, m.p.PolicyMaps.DeletePolicyMap(e.ID))
	}
	errs = append(errs, m.p.Links.DeleteEndpointLink(ctx, m.linkSpec(e)))
	return errors.Join(errs...)
}

// undoCreation removes what a creation the agent did not finish had
// made (its veth with the address in the pod, its pinned programs and
// policy map) and its state file; what was never made is not an error.
func (m *Manager) undoCreation(ctx context.Context, e Endpoint) {
	m.p.Log.Warn("Removing an endpoint whose creation did not finish (the agent stopped while creating it)",
		"endpoint", e.ID, "netns", e.NetNSPath)
	if err := m.dropRestored(ctx, e, nil); err != nil {
		m.p.Log.Warn("Cannot remove all of a half-created endpoint; its state file stays for the next start",
			"endpoint", e.ID, "error", err)
		return
	}
	if err := m.removeState(e.ID); err != nil {
		m.p.Log.Warn("Cannot delete state file", "endpoint", e.ID, "error", err)
	}
}
