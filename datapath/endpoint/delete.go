package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/datapath"
)

// Delete undoes everything Create did for the endpoint id. A step that
// fails is reported and the endpoint stays (state disconnecting, with
// the error) so that Delete can be called again; the steps that
// succeeded are not repeated.
func (m *Manager) Delete(ctx context.Context, id datapath.EndpointID) error {
	m.ops.Lock()
	defer m.ops.Unlock()
	m.mu.RLock()
	ep, ok := m.eps[id]
	m.mu.RUnlock()
	if !ok {
		return fmt.Errorf("delete endpoint %d: %w", id, ErrNotFound)
	}
	m.setState(ep, StateDisconnecting)
	if err := m.teardown(ctx, ep); err != nil {
		m.update(ep, func(e *Endpoint) { e.Error = err.Error() })
		return fmt.Errorf("delete endpoint %d: %w", id, err)
	}
	if err := m.removeState(ep.snap.ID); err != nil {
		m.update(ep, func(e *Endpoint) { e.Error = err.Error() })
		return fmt.Errorf("delete endpoint %d: %w", id, err)
	}
	m.mu.Lock()
	delete(m.eps, ep.snap.ID)
	m.mu.Unlock()
	m.changed()
	m.p.Log.Info("Deleted endpoint", "endpoint", id)
	return nil
}

// teardown undoes the steps of a creation that are done, in reverse
// order, each once; it goes on after a failure and joins the errors.
func (m *Manager) teardown(ctx context.Context, ep *endpoint) error {
	var errs []error
	id := ep.snap.ID
	if ep.attached && m.p.Loader != nil {
		if err := m.p.Loader.Detach(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("detach programs: %w", err))
		} else {
			ep.attached = false
		}
	}
	ep.attached = false
	if ep.mapWritten {
		if err := m.p.PolicyMaps.DeletePolicyMap(id); err != nil {
			errs = append(errs, fmt.Errorf("delete policy map: %w", err))
		} else {
			ep.mapWritten = false
		}
	}
	if ep.policy != nil {
		ep.policy.Detach()
		ep.policy = nil
	}
	if ep.inIPCache {
		if err := m.deleteIPCache(ep); err != nil {
			errs = append(errs, err)
		} else {
			ep.inIPCache = false
		}
	}
	if ep.ident != nil {
		if _, err := m.p.Identities.Release(ctx, ep.ident); err != nil {
			errs = append(errs, fmt.Errorf("release identity %d: %w", ep.ident.ID, err))
		} else {
			ep.ident = nil
		}
	}
	if ep.linked {
		m.mu.RLock()
		spec := m.linkSpec(ep.snap)
		m.mu.RUnlock()
		if err := m.p.Links.DeleteEndpointLink(ctx, spec); err != nil {
			errs = append(errs, err)
		} else {
			ep.linked = false
		}
	}
	if ep.ipsHeld {
		if err := m.p.IPAM.Release(ep.snap.IPv4, ep.snap.IPv6); err != nil {
			errs = append(errs, err)
		}
		ep.ipsHeld = false // a release that failed released what it could
	}
	return errors.Join(errs...)
}

// deleteIPCache removes the endpoint's addresses from the ipcache; an
// address that is not there (a half-done upsert) is not an error.
func (m *Manager) deleteIPCache(ep *endpoint) error {
	var errs []error
	for _, ip := range []netip.Addr{ep.snap.IPv4, ep.snap.IPv6} {
		if !ip.IsValid() {
			continue
		}
		if _, err := m.p.IPCache.DeleteLocalEndpoint(ip); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
