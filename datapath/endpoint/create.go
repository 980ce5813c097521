package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/endpoint/ipam"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
)

// Create creates the endpoint req asks for. Bad fields give a
// *FieldError (all of them joined); an existing id gives ErrExists. On
// any error nothing of the endpoint is left: the steps done are undone.
func (m *Manager) Create(ctx context.Context, req Request) (Endpoint, error) {
	r, err := req.validate(m.p.ClusterName)
	if err != nil {
		return Endpoint{}, fmt.Errorf("create endpoint %d: %w", req.ID, err)
	}
	m.ops.Lock()
	defer m.ops.Unlock()
	ep := &endpoint{snap: Endpoint{
		ID: r.id, NetNSPath: r.netns, IfName: r.ifName, Labels: withNamedPortsLabels(r.labels, r.namedPorts), NamedPorts: r.namedPorts,
		ContainerID: r.owner.containerID, Pod: PodName{Namespace: r.owner.podNamespace, Name: r.owner.podName},
		State: StateWaitingForIdentity, Created: time.Now(),
	}}
	m.mu.Lock()
	if _, ok := m.eps[r.id]; ok {
		m.mu.Unlock()
		return Endpoint{}, fmt.Errorf("create endpoint %d: %w", r.id, ErrExists)
	}
	if other, ok := m.containerEndpoint(r.owner.containerID, r.ifName); ok {
		m.mu.Unlock()
		return Endpoint{}, fmt.Errorf("create endpoint %d: %w: endpoint %d is container %s's %s",
			r.id, ErrExists, other, r.owner.containerID, r.ifName)
	}
	m.eps[r.id] = ep
	m.mu.Unlock()

	if err := m.createSteps(ctx, ep, r); err != nil {
		if uerr := m.teardown(context.WithoutCancel(ctx), ep); uerr != nil {
			err = errors.Join(err, fmt.Errorf("undo: %w", uerr))
		} else if rerr := m.removeState(r.id); rerr != nil {
			err = errors.Join(err, fmt.Errorf("undo: %w", rerr))
		}
		m.mu.Lock()
		delete(m.eps, r.id)
		m.mu.Unlock()
		m.changed()
		return Endpoint{}, fmt.Errorf("create endpoint %d: %w", r.id, err)
	}
	m.p.Log.Info("Created endpoint", "endpoint", r.id, "ipv4", ep.snap.IPv4, "ipv6", ep.snap.IPv6,
		"identity", ep.snap.Identity, "host-if", ep.snap.HostIfName)
	e, _ := m.Get(r.id)
	return e, nil
}

// createSteps does the steps of a creation in order; teardown undoes
// the ones done.
func (m *Manager) createSteps(ctx context.Context, ep *endpoint, r request) error {
	v4, v6, err := m.allocateIPs(r)
	if err != nil {
		return err
	}
	ep.ipsHeld = true
	m.update(ep, func(e *Endpoint) { e.IPv4, e.IPv6 = v4, v6 })
	// The intent goes to disk before the first side effect in the
	// kernel: an agent killed from here on leaves a state file that the
	// next start sees and undoes (RestoreLocal).
	if err := m.writeIntent(ep); err != nil {
		return err
	}
	if err := m.plumb(ctx, ep); err != nil {
		return err
	}
	if err := m.allocateIdentity(ctx, ep); err != nil {
		return err
	}
	if err := m.upsertIPCache(ep); err != nil {
		return err
	}
	if err := m.regenerate(ctx, ep); err != nil {
		return err
	}
	return m.writeState(ep)
}

// allocateIPs takes the requested addresses, and from the IPAM one of
// each other family the node has a pod CIDR of. On an error none is
// held.
func (m *Manager) allocateIPs(r request) (v4, v6 netip.Addr, err error) {
	owner := fmt.Sprintf("endpoint %d", r.id)
	for _, f := range []struct {
		ip    netip.Addr
		field string
	}{{r.ipv4, "ipv4"}, {r.ipv6, "ipv6"}} {
		if !f.ip.IsValid() {
			continue
		}
		if err := m.p.IPAM.AllocateIP(f.ip, owner); err != nil {
			_ = m.p.IPAM.Release(v4)
			return netip.Addr{}, netip.Addr{}, &FieldError{Field: f.field, Err: err}
		}
		if f.ip.Is4() {
			v4 = f.ip
		} else {
			v6 = f.ip
		}
	}
	cidr4, cidr6 := m.p.IPAM.CIDRs()
	a4, a6, err := m.p.IPAM.Allocate(owner, !v4.IsValid() && cidr4.IsValid(), !v6.IsValid() && cidr6.IsValid())
	if err != nil {
		_ = m.p.IPAM.Release(v4, v6)
		return netip.Addr{}, netip.Addr{}, err
	}
	if a4.IsValid() {
		v4 = a4
	}
	if a6.IsValid() {
		v6 = a6
	}
	if !v4.IsValid() && !v6.IsValid() {
		return v4, v6, fmt.Errorf("allocate addresses: %w: the node has none (--pod-cidr)", ipam.ErrNoCIDR)
	}
	return v4, v6, nil
}

// linkSpec is the plumbing of an endpoint.
func (m *Manager) linkSpec(e Endpoint) datapath.EndpointLinkSpec {
	gw4, gw6 := m.p.IPAM.Routers()
	return datapath.EndpointLinkSpec{ID: e.ID, NetNSPath: e.NetNSPath, IfName: e.IfName, MTU: m.p.MTU,
		IPv4: e.IPv4, IPv6: e.IPv6, GatewayIPv4: gw4, GatewayIPv6: gw6}
}

// plumb creates the veth.
func (m *Manager) plumb(ctx context.Context, ep *endpoint) error {
	m.mu.RLock()
	spec := m.linkSpec(ep.snap)
	m.mu.RUnlock()
	l, err := m.p.Links.CreateEndpointLink(ctx, spec)
	var ise *datapath.InvalidSpecError
	if errors.As(err, &ise) {
		switch ise.Field {
		case "NetNSPath":
			return &FieldError{Field: "netns-path", Err: err}
		case "IfName":
			return &FieldError{Field: "interface-name", Err: err}
		}
	}
	if err != nil {
		return err
	}
	ep.linked = true
	m.update(ep, func(e *Endpoint) {
		e.HostIfName, e.HostIfIndex, e.MAC, e.ContainerMAC = l.IfName, l.IfIndex, l.MAC, l.ContainerMAC
	})
	return nil
}

// allocateIdentity takes a reference on the identity of the labels.
func (m *Manager) allocateIdentity(ctx context.Context, ep *endpoint) error {
	id, _, err := m.p.Identities.AllocateIdentity(ctx, ep.snap.Labels)
	if err != nil {
		return fmt.Errorf("allocate identity: %w", err)
	}
	ep.ident = id
	m.update(ep, func(e *Endpoint) { e.Identity, e.State = id.ID, StateRegenerating })
	return nil
}

// upsertIPCache puts the endpoint's addresses into the ipcache.
func (m *Manager) upsertIPCache(ep *endpoint) error {
	ep.inIPCache = true // a half-done upsert is undone too
	for _, ip := range []netip.Addr{ep.snap.IPv4, ep.snap.IPv6} {
		if !ip.IsValid() {
			continue
		}
		_, err := m.p.IPCache.UpsertLocalEndpoint(ipcache.LocalEndpoint{IP: ip, Identity: ep.ident.ID, EndpointID: uint16(ep.snap.ID),
			K8sNamespace: namespaceOf(ep.snap.Labels), K8sPodName: ep.snap.Pod.Name, NamedPorts: ep.snap.NamedPorts})
		if err != nil {
			return err
		}
	}
	return nil
}

// namespaceOf returns the value of the pod-namespace label, if any.
func namespaceOf(ls labels.Labels) string {
	if l, ok := ls.Get(labels.KeyPodNamespace); ok {
		return l.Value
	}
	return ""
}
