package policy

import (
	"maps"
	"slices"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// Egress named ports. A named port in an egress rule names a port of the
// destination, so its keys depend on the peer: for each destination
// identity the rule selects, the keys of the numbers that name has on the
// endpoints with that identity (their union: pods of one label set may
// number one name differently). A peer that declares no such port (a
// CIDR or world identity, a pod without it) gets no key from the name.
// A rule whose peer is any identity gets keys for each identity that
// declares the name, never a wildcard key.
//
// The repository holds the source of the peers' named ports
// (PeerNamedPorts) and every endpoint policy with egress named ports;
// PeerNamedPortsChanged updates their map states incrementally, as
// identity churn does: ConsumeMapChanges hands out the delta.

// peerPortState is the repository's source of peer named ports and the
// endpoint policies that resolve against it. Guarded by the cache lock.
type peerPortState struct {
	src   PeerNamedPorts
	users map[*EndpointPolicy]struct{}
}

func newPeerPortState() *peerPortState {
	return &peerPortState{users: make(map[*EndpointPolicy]struct{})}
}

// SetPeerNamedPorts sets where the engine learns the named ports of
// peer identities (nil: nowhere, so egress named ports open nothing).
// Endpoint policies already distilled are brought up to date.
func (r *Repository) SetPeerNamedPorts(src PeerNamedPorts) {
	r.cache.Locked(func() {
		r.peers.src = src
		for ep := range r.peers.users {
			ep.refreshPeerKeysLocked()
		}
	})
}

// PeerNamedPorts returns the source set with SetPeerNamedPorts, or nil.
func (r *Repository) PeerNamedPorts() PeerNamedPorts {
	var src PeerNamedPorts
	r.cache.Locked(func() { src = r.peers.src })
	return src
}

// PeerNamedPortsChanged tells the engine that the named ports of the
// identities ids changed in the source: every endpoint policy with
// egress named ports updates the keys of those identities. Call it
// without holding locks the source takes.
func (r *Repository) PeerNamedPortsChanged(ids ...identity.NumericIdentity) {
	if len(ids) == 0 {
		return
	}
	r.cache.Locked(func() {
		for ep := range r.peers.users {
			ep.peerPortsChangedLocked(ids)
		}
	})
}

// splitPortsLocked computes the port keys of entry i: an ingress
// entry's named ports resolve against the endpoint's own; an egress
// entry's are kept apart, to resolve per destination identity.
func (ep *EndpointPolicy) splitPortsLocked(i int, e policyEntry) {
	if e.dir == Ingress {
		ep.portKeys[i] = portKeys(*e.rule, ep.named)
		return
	}
	ep.portKeys[i] = portKeys(*e.rule, nil)
	var named []policyapi.PortProtocol
	for _, pp := range e.rule.Ports {
		if pp.Name != "" {
			named = append(named, pp)
		}
	}
	if named == nil {
		return
	}
	if ep.peerNamed == nil {
		ep.peerNamed = make(map[int][]policyapi.PortProtocol)
		ep.peerKeys = make(map[int]map[identity.NumericIdentity][]portKey)
	}
	ep.peerNamed[i] = named
	ep.peerKeys[i] = make(map[identity.NumericIdentity][]portKey)
}

// registerPeerUserLocked registers ep with the repository when it has
// egress named ports.
func (ep *EndpointPolicy) registerPeerUserLocked() {
	if len(ep.peerNamed) > 0 {
		ep.sp.peers.users[ep] = struct{}{}
	}
}

// expandAnyPeerLocked adds the keys of entry i, whose peer is any
// identity, for every identity that declares one of its port names.
func (ep *EndpointPolicy) expandAnyPeerLocked(i int) {
	for _, id := range ep.anyPeerCandidatesLocked(i) {
		ep.setPeerKeysLocked(i, id, true)
	}
}

func (ep *EndpointPolicy) anyPeerCandidatesLocked(i int) []identity.NumericIdentity {
	src := ep.sp.peers.src
	if ep.peerNamed[i] == nil || src == nil {
		return nil
	}
	var out []identity.NumericIdentity
	for _, pp := range ep.peerNamed[i] {
		out = append(out, src.IdentitiesWithPort(pp.Name)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// peerKeysOf resolves the named ports of entry i against the ports of
// the destination identity id.
func (ep *EndpointPolicy) peerKeysOf(i int, id identity.NumericIdentity) []portKey {
	src := ep.sp.peers.src
	if src == nil {
		return nil
	}
	ports := src.NamedPorts(id)
	if len(ports) == 0 {
		return nil
	}
	return portKeys(policyapi.PeerRule{Ports: ep.peerNamed[i]}, ports)
}

// setPeerKeysLocked replaces the keys entry i's named ports give the
// identity id: its current resolution when selected, none when not.
func (ep *EndpointPolicy) setPeerKeysLocked(i int, id identity.NumericIdentity, selected bool) {
	e := ep.sp.entries[i]
	var now []portKey
	if selected {
		now = ep.peerKeysOf(i, id)
	}
	old := ep.peerKeys[i][id]
	for _, pk := range now {
		ep.addLocked(portMapKey(e.dir, pk).withIdentity(id), e.deny)
	}
	for _, pk := range old {
		ep.removeLocked(portMapKey(e.dir, pk).withIdentity(id), e.deny)
	}
	switch {
	case selected && (e.sel != nil || len(now) > 0):
		ep.peerKeys[i][id] = now
	default:
		delete(ep.peerKeys[i], id)
	}
}

// peerPortsChangedLocked re-resolves the egress named ports of the
// identities ids: those an entry selects, or any for an entry whose peer
// is any identity.
func (ep *EndpointPolicy) peerPortsChangedLocked(ids []identity.NumericIdentity) {
	for i := range ep.peerNamed {
		anyPeer := ep.sp.entries[i].sel == nil
		for _, id := range ids {
			if _, selected := ep.peerKeys[i][id]; selected || anyPeer {
				ep.setPeerKeysLocked(i, id, true)
			}
		}
	}
}

// refreshPeerKeysLocked re-resolves every egress named port, after the
// source changed.
func (ep *EndpointPolicy) refreshPeerKeysLocked() {
	for i := range ep.peerNamed {
		ids := slices.Collect(maps.Keys(ep.peerKeys[i]))
		if ep.sp.entries[i].sel == nil {
			ids = append(ids, ep.anyPeerCandidatesLocked(i)...)
		}
		slices.Sort(ids)
		for _, id := range slices.Compact(ids) {
			ep.setPeerKeysLocked(i, id, true)
		}
	}
}
