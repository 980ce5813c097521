package policy

import (
	"github.com/apiary-net/apiary/policy/api"
	"github.com/apiary-net/apiary/policy/identity"
)

// contributions counts the entries that allow and deny one key.
type contributions struct{ allow, deny int }

func (c contributions) entry() (Entry, bool) {
	return Entry{Deny: c.deny > 0}, c.allow+c.deny > 0
}

// EndpointPolicy is the map state of one endpoint: its identity's
// SelectorPolicy with named ports resolved — in ingress entries against
// the endpoint's own ports, in egress entries against each destination
// identity's (PeerNamedPorts). It follows identity and peer named-port
// changes incrementally; ConsumeMapChanges returns what changed.
type EndpointPolicy struct {
	sp    *SelectorPolicy
	named []api.NamedPort
	// portKeys are, per policy entry, the port keys of every identity
	// the entry selects.
	portKeys [][]portKey
	// peerNamed are the named ports of the egress policy entries that
	// have some (by entry index), resolved per destination identity; nil
	// when none has.
	peerNamed map[int][]api.PortProtocol

	// Guarded by the cache lock:
	// peerKeys are, per entry in peerNamed, the port keys its named
	// ports gave each identity: every selected identity (an empty list
	// when the name resolves to nothing on it), or for an entry whose
	// peer is any identity, those with keys.
	peerKeys map[int]map[identity.NumericIdentity][]portKey
	counts   map[Key]contributions
	state    MapState
	before   map[Key]beforeState // first value of keys touched since the last consume
	detached bool
}

type beforeState struct {
	entry   Entry
	present bool
}

// DistillPolicy computes the map state of an endpoint with this
// identity that declares the named ports named, and keeps it up to date
// with identity changes and, through the repository, with changes of
// the peers' named ports (Repository.PeerNamedPortsChanged) until
// Detach.
func (sp *SelectorPolicy) DistillPolicy(named []api.NamedPort) *EndpointPolicy {
	ep := &EndpointPolicy{
		sp:       sp,
		named:    named,
		portKeys: make([][]portKey, len(sp.entries)),
		counts:   make(map[Key]contributions),
		state:    make(MapState),
		before:   make(map[Key]beforeState),
	}
	sp.cache.Locked(func() {
		sp.reacquireLocked()
		for i, e := range sp.entries {
			ep.splitPortsLocked(i, e)
		}
		for dir := range 2 {
			if !sp.defaultDeny[dir] {
				ep.addLocked(Key{Direction: Direction(dir)}, false)
			}
		}
		for i, e := range sp.entries {
			if e.sel == nil {
				ep.updateEntryLocked(i, []identity.NumericIdentity{0}, nil)
				ep.expandAnyPeerLocked(i)
			} else {
				ep.updateEntryLocked(i, e.sel.Selections(), nil)
			}
		}
		clear(ep.before)
		sp.endpoints[ep] = struct{}{}
		ep.registerPeerUserLocked()
	})
	return ep
}

// SelectorPolicy returns the policy the endpoint policy was distilled
// from.
func (ep *EndpointPolicy) SelectorPolicy() *SelectorPolicy { return ep.sp }

// MapState returns a copy of the current map state.
func (ep *EndpointPolicy) MapState() MapState {
	var out MapState
	ep.sp.cache.Locked(func() { out = ep.state.Clone() })
	return out
}

// Len returns the number of keys of the current map state: the entries
// the endpoint's policy map needs.
func (ep *EndpointPolicy) Len() int {
	var n int
	ep.sp.cache.Locked(func() { n = len(ep.state) })
	return n
}

// ConsumeMapChanges returns the changes to the map state since the
// previous call (or since DistillPolicy) and forgets them.
func (ep *EndpointPolicy) ConsumeMapChanges() MapChanges {
	ch := MapChanges{Adds: make(map[Key]Entry)}
	ep.sp.cache.Locked(func() {
		for k, b := range ep.before {
			now, ok := ep.state[k]
			switch {
			case !ok && b.present:
				ch.Deletes = append(ch.Deletes, k)
			case ok && (!b.present || now != b.entry):
				ch.Adds[k] = now
			}
		}
		clear(ep.before)
	})
	return ch
}

// Detach stops following identity changes; the selector policy releases
// its selectors when it is stale and this was its last endpoint.
func (ep *EndpointPolicy) Detach() {
	ep.sp.cache.Locked(func() {
		if ep.detached {
			return
		}
		ep.detached = true
		delete(ep.sp.endpoints, ep)
		delete(ep.sp.peers.users, ep)
		ep.sp.releaseIfUnusedLocked()
	})
}

// updateEntryLocked adds and removes the keys of policy entry i for
// identities that its selector gained and lost.
func (ep *EndpointPolicy) updateEntryLocked(i int, added, deleted []identity.NumericIdentity) {
	e := ep.sp.entries[i]
	for _, pk := range ep.portKeys[i] {
		k := Key{Direction: e.dir, Proto: pk.proto, Port: pk.port, PrefixLen: pk.prefixLen}
		for _, id := range added {
			k.Identity = id
			ep.addLocked(k, e.deny)
		}
		for _, id := range deleted {
			k.Identity = id
			ep.removeLocked(k, e.deny)
		}
	}
	if ep.peerNamed[i] != nil && e.sel != nil {
		for _, id := range added {
			ep.setPeerKeysLocked(i, id, true)
		}
		for _, id := range deleted {
			ep.setPeerKeysLocked(i, id, false)
		}
	}
}

func (ep *EndpointPolicy) addLocked(k Key, deny bool) {
	c := ep.counts[k]
	ep.remember(k)
	if deny {
		c.deny++
	} else {
		c.allow++
	}
	ep.counts[k] = c
	ep.state[k], _ = c.entry()
}

func (ep *EndpointPolicy) removeLocked(k Key, deny bool) {
	c, ok := ep.counts[k]
	if !ok {
		return
	}
	ep.remember(k)
	if deny {
		c.deny--
	} else {
		c.allow--
	}
	if e, ok := c.entry(); ok {
		ep.counts[k] = c
		ep.state[k] = e
		return
	}
	delete(ep.counts, k)
	delete(ep.state, k)
}

func (ep *EndpointPolicy) remember(k Key) {
	if _, ok := ep.before[k]; ok {
		return
	}
	e, present := ep.state[k]
	ep.before[k] = beforeState{entry: e, present: present}
}
