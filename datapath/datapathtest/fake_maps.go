package datapathtest

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy"
)

// Attach implements datapath.Loader.
func (f *Fake) Attach(_ context.Context, spec datapath.EndpointSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("Attach", "%d %s identity=%d", spec.ID, spec.IfName, spec.Identity); err != nil {
		return err
	}
	f.attached[spec.ID] = spec
	return nil
}

// Detach implements datapath.Loader.
func (f *Fake) Detach(_ context.Context, id datapath.EndpointID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("Detach", "%d", id); err != nil {
		return err
	}
	delete(f.attached, id)
	return nil
}

// Restore implements datapath.Loader.
func (f *Fake) Restore(_ context.Context, id datapath.EndpointID, ifindex int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("Restore", "%d %d", id, ifindex); err != nil {
		return err
	}
	if s, ok := f.attached[id]; !ok || s.IfIndex != ifindex {
		return fmt.Errorf("restore endpoint %d: %w", id, datapath.ErrNotAttached)
	}
	return nil
}

// SyncPolicyMap implements datapath.PolicyMapWriter.
func (f *Fake) SyncPolicyMap(id datapath.EndpointID, desired policy.MapState) (added, removed int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("SyncPolicyMap", "%d keys=%d", id, len(desired)); err != nil {
		return 0, 0, err
	}
	if f.PolicyMapMax > 0 && len(desired) > f.PolicyMapMax {
		return 0, 0, &datapath.PolicyMapFullError{ID: id, Keys: len(desired), Max: f.PolicyMapMax}
	}
	old := f.policies[id]
	ch := old.Diff(desired)
	f.policies[id] = desired.Clone()
	return len(ch.Adds), len(ch.Deletes), nil
}

// ApplyPolicyMapChanges implements datapath.PolicyMapWriter.
func (f *Fake) ApplyPolicyMapChanges(id datapath.EndpointID, changes policy.MapChanges) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("ApplyPolicyMapChanges", "%d changes=%d", id, changes.Len()); err != nil {
		return err
	}
	m := f.policies[id].Clone()
	if m == nil {
		m = policy.MapState{}
	}
	m.Apply(changes)
	if f.PolicyMapMax > 0 && len(m) > f.PolicyMapMax {
		return &datapath.PolicyMapFullError{ID: id, Keys: len(m), Max: f.PolicyMapMax}
	}
	f.policies[id] = m
	return nil
}

// DeletePolicyMap implements datapath.PolicyMapWriter.
func (f *Fake) DeletePolicyMap(id datapath.EndpointID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("DeletePolicyMap", "%d", id); err != nil {
		return err
	}
	delete(f.policies, id)
	return nil
}

// ApplyIPCache implements datapath.IPCacheMapWriter.
func (f *Fake) ApplyIPCache(changes []datapath.IPCacheMapChange) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("ApplyIPCache", "changes=%d", len(changes)); err != nil {
		return err
	}
	for _, c := range changes {
		if c.Delete {
			delete(f.ipcache, c.Entry.Prefix)
		} else {
			f.ipcache[c.Entry.Prefix] = c.Entry
		}
	}
	return nil
}

// UpsertNodeRoute implements datapath.NodeRoutes.
func (f *Fake) UpsertNodeRoute(_ context.Context, podCIDR netip.Prefix, nodeIP netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("UpsertNodeRoute", "%s via %s", podCIDR, nodeIP); err != nil {
		return err
	}
	f.routes[podCIDR] = nodeIP
	return nil
}

// DeleteNodeRoute implements datapath.NodeRoutes.
func (f *Fake) DeleteNodeRoute(_ context.Context, podCIDR netip.Prefix, nodeIP netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("DeleteNodeRoute", "%s via %s", podCIDR, nodeIP); err != nil {
		return err
	}
	if f.routes[podCIDR] == nodeIP {
		delete(f.routes, podCIDR)
	}
	return nil
}

// ReconcileIPCache implements datapath.IPCacheMapWriter.
func (f *Fake) ReconcileIPCache(entries []datapath.IPCacheMapEntry) (added, removed int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("ReconcileIPCache", "entries=%d", len(entries)); err != nil {
		return 0, 0, err
	}
	want := make(map[netip.Prefix]datapath.IPCacheMapEntry, len(entries))
	for _, e := range entries {
		want[e.Prefix] = e
		if old, ok := f.ipcache[e.Prefix]; !ok || old != e {
			added++
		}
	}
	for p := range f.ipcache {
		if _, ok := want[p]; !ok {
			removed++
		}
	}
	f.ipcache = want
	return added, removed, nil
}
