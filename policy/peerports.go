package policy

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// PeerNamedPorts is what the engine knows of the named ports of peers.
// A named port in an egress rule names a port of the destination (the
// NetworkPolicy spec), so the engine resolves it, per destination
// identity, against the ports the endpoints with that identity declare.
// The agent fills it from the ipcache, the simulation from its
// endpoints (PeerPortTable does both).
//
// The engine calls it with its selector cache locked: implementations
// must be safe for concurrent use and must not call into the engine.
type PeerNamedPorts interface {
	// NamedPorts returns the ports the endpoints with identity id
	// declare: the union over those endpoints, so one name may come
	// with several numbers. Nil when none declares any. The slice must
	// not be modified.
	NamedPorts(id identity.NumericIdentity) []policyapi.NamedPort
	// IdentitiesWithPort returns the identities some endpoint of which
	// declares a port named name, for rules whose peer is any identity.
	IdentitiesWithPort(name string) []identity.NumericIdentity
}

// PeerPortTable is a PeerNamedPorts fed endpoint by endpoint: Upsert and
// Delete return the identities whose ports changed, which the caller
// passes to Repository.PeerNamedPortsChanged. It is safe for concurrent
// use.
type PeerPortTable struct {
	mu        sync.RWMutex
	endpoints map[string]peerEndpoint
	// counts counts, per identity, the endpoints declaring each port.
	counts map[identity.NumericIdentity]map[policyapi.NamedPort]int
	// union caches the sorted keys of counts[id].
	union  map[identity.NumericIdentity][]policyapi.NamedPort
	byName map[string]map[identity.NumericIdentity]int
}

type peerEndpoint struct {
	id    identity.NumericIdentity
	ports []policyapi.NamedPort
}

var _ PeerNamedPorts = (*PeerPortTable)(nil)

// NewPeerPortTable returns an empty table.
func NewPeerPortTable() *PeerPortTable {
	return &PeerPortTable{
		endpoints: make(map[string]peerEndpoint),
		counts:    make(map[identity.NumericIdentity]map[policyapi.NamedPort]int),
		union:     make(map[identity.NumericIdentity][]policyapi.NamedPort),
		byName:    make(map[string]map[identity.NumericIdentity]int),
	}
}

// Upsert records that the endpoint key (an address, "ns/pod"...) has
// identity id and declares ports, replacing what it said before, and
// returns the identities whose ports changed (sorted).
func (t *PeerPortTable) Upsert(key string, id identity.NumericIdentity, ports []policyapi.NamedPort) []identity.NumericIdentity {
	ports = dedupPorts(ports)
	t.mu.Lock()
	defer t.mu.Unlock()
	old, had := t.endpoints[key]
	if had && old.id == id && slices.Equal(old.ports, ports) {
		return nil
	}
	changed := map[identity.NumericIdentity]bool{}
	if had {
		t.removeLocked(old, changed)
	}
	delete(t.endpoints, key)
	if len(ports) > 0 {
		ep := peerEndpoint{id: id, ports: ports}
		t.endpoints[key] = ep
		t.addLocked(ep, changed)
	}
	return t.refreshLocked(changed)
}

// Delete forgets the endpoint key and returns the identities whose ports
// changed.
func (t *PeerPortTable) Delete(key string) []identity.NumericIdentity {
	t.mu.Lock()
	defer t.mu.Unlock()
	old, had := t.endpoints[key]
	if !had {
		return nil
	}
	delete(t.endpoints, key)
	changed := map[identity.NumericIdentity]bool{}
	t.removeLocked(old, changed)
	return t.refreshLocked(changed)
}

// NamedPorts implements PeerNamedPorts.
func (t *PeerPortTable) NamedPorts(id identity.NumericIdentity) []policyapi.NamedPort {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.union[id]
}

// IdentitiesWithPort implements PeerNamedPorts.
func (t *PeerPortTable) IdentitiesWithPort(name string) []identity.NumericIdentity {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Sorted(maps.Keys(t.byName[name]))
}

func (t *PeerPortTable) addLocked(ep peerEndpoint, changed map[identity.NumericIdentity]bool) {
	c := t.counts[ep.id]
	if c == nil {
		c = make(map[policyapi.NamedPort]int)
		t.counts[ep.id] = c
	}
	for _, p := range ep.ports {
		if c[p]++; c[p] == 1 {
			changed[ep.id] = true
			t.countName(p.Name, ep.id, 1)
		}
	}
}

func (t *PeerPortTable) removeLocked(ep peerEndpoint, changed map[identity.NumericIdentity]bool) {
	c := t.counts[ep.id]
	for _, p := range ep.ports {
		if c[p]--; c[p] == 0 {
			delete(c, p)
			changed[ep.id] = true
			t.countName(p.Name, ep.id, -1)
		}
	}
	if len(c) == 0 {
		delete(t.counts, ep.id)
	}
}

// countName counts the distinct ports named name of identity id.
func (t *PeerPortTable) countName(name string, id identity.NumericIdentity, delta int) {
	ids := t.byName[name]
	if ids == nil {
		ids = make(map[identity.NumericIdentity]int)
		t.byName[name] = ids
	}
	if ids[id] += delta; ids[id] == 0 {
		delete(ids, id)
	}
	if len(ids) == 0 {
		delete(t.byName, name)
	}
}

// refreshLocked rebuilds the cached union of the changed identities and
// returns them sorted.
func (t *PeerPortTable) refreshLocked(changed map[identity.NumericIdentity]bool) []identity.NumericIdentity {
	out := slices.Sorted(maps.Keys(changed))
	for _, id := range out {
		if c := t.counts[id]; len(c) > 0 {
			t.union[id] = slices.SortedFunc(maps.Keys(c), compareNamedPorts)
		} else {
			delete(t.union, id)
		}
	}
	return out
}

// dedupPorts returns ports sorted without duplicates and without port 0.
func dedupPorts(ports []policyapi.NamedPort) []policyapi.NamedPort {
	out := slices.DeleteFunc(slices.Clone(ports), func(p policyapi.NamedPort) bool { return p.Port == 0 || p.Name == "" })
	slices.SortFunc(out, compareNamedPorts)
	return slices.Compact(out)
}

func compareNamedPorts(a, b policyapi.NamedPort) int {
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
}
