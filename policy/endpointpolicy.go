package policy

import (
	"maps"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// contributions counts the entries that allow and deny one key; a key
// is in the map state while some entry contributes to it, and denies
// when a deny entry does.
type contributions struct{ allow, deny uint32 }

func (c contributions) entry() Entry { return Entry{Deny: c.deny > 0} }

// EndpointPolicy is the map state of one endpoint: its identity's
// SelectorPolicy with named ports resolved — in ingress entries against
// the endpoint's own ports, in egress entries against each destination
// identity's (PeerNamedPorts). It follows identity and peer named-port
// changes incrementally; ConsumeMapChanges returns what changed.
type EndpointPolicy struct {
	sp    *SelectorPolicy
	named []policyapi.NamedPort
	// portKeys are, per policy entry, the port keys of every identity
	// the entry selects.
	portKeys [][]portKey
	// peerNamed are the named ports of the egress policy entries that
	// have some (by entry index), resolved per destination identity; nil
	// when none has.
	peerNamed map[int][]policyapi.PortProtocol

	// Guarded by the cache lock:
	// peerKeys are, per entry in peerNamed, the port keys its named
	// ports gave each identity: every selected identity (an empty list
	// when the name resolves to nothing on it), or for an entry whose
	// peer is any identity, those with keys.
	peerKeys map[int]map[identity.NumericIdentity][]portKey
	// counts is the map state: every key some entry contributes to,
	// with its contributions (the verdict derives from them).
	counts map[mapKey]contributions
	// before holds the first value of the keys touched since the last
	// consume; nil when none was. It is not kept while distilling
	// (tracking false): the distilled state is where consumers start.
	before   map[mapKey]beforeState
	tracking bool
	detached bool
}

type beforeState struct {
	entry   Entry
	present bool
}

// smallBefore is the size up to which a consumed before map is cleared
// for reuse; a larger one (a burst of changes) is dropped, not to hold
// its buckets for the endpoint's lifetime.
const smallBefore = 8

// DistillPolicy computes the map state of an endpoint with this
// identity that declares the named ports named, and keeps it up to date
// with identity changes and, through the repository, with changes of
// the peers' named ports (Repository.PeerNamedPortsChanged) until
// Detach.
func (sp *SelectorPolicy) DistillPolicy(named []policyapi.NamedPort) *EndpointPolicy {
	ep := &EndpointPolicy{
		sp:       sp,
		named:    named,
		portKeys: make([][]portKey, len(sp.entries)),
	}
	sp.cache.Locked(func() {
		sp.reacquireLocked()
		for i, e := range sp.entries {
			ep.splitPortsLocked(i, e)
		}
		hint := ep.sizeHintLocked()
		ep.counts = make(map[mapKey]contributions, hint)
		for dir := range 2 {
			if !sp.defaultDeny[dir] {
				ep.addLocked(packKey(Key{Direction: Direction(dir)}), false)
			}
		}
		for i, e := range sp.entries {
			if e.sel == nil {
				ep.updateEntryLocked(i, []identity.NumericIdentity{0}, nil)
				ep.expandAnyPeerLocked(i)
			} else {
				ep.addSelectionsLocked(i)
			}
		}
		ep.shrinkLocked(hint)
		ep.tracking = true
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
	ep.sp.cache.Locked(func() { out = ep.mapStateLocked() })
	return out
}

func (ep *EndpointPolicy) mapStateLocked() MapState {
	out := make(MapState, len(ep.counts))
	for k, c := range ep.counts {
		out[k.unpack()] = c.entry()
	}
	return out
}

// Len returns the number of keys of the current map state: the entries
// the endpoint's policy map needs.
func (ep *EndpointPolicy) Len() int {
	var n int
	ep.sp.cache.Locked(func() { n = len(ep.counts) })
	return n
}

// ConsumeMapChanges returns the changes to the map state since the
// previous call (or since DistillPolicy) and forgets them.
func (ep *EndpointPolicy) ConsumeMapChanges() MapChanges {
	ch := MapChanges{Adds: make(map[Key]Entry)}
	ep.sp.cache.Locked(func() {
		for k, b := range ep.before {
			c, ok := ep.counts[k]
			switch now := c.entry(); {
			case !ok && b.present:
				ch.Deletes = append(ch.Deletes, k.unpack())
			case ok && (!b.present || now != b.entry):
				ch.Adds[k.unpack()] = now
			}
		}
		ep.forgetChangesLocked()
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
		k := portMapKey(e.dir, pk)
		for _, id := range added {
			ep.addLocked(k.withIdentity(id), e.deny)
		}
		for _, id := range deleted {
			ep.removeLocked(k.withIdentity(id), e.deny)
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

// addSelectionsLocked adds the keys of entry i for every identity its
// selector selects, when distilling (in no particular order: the counts
// do not depend on it).
func (ep *EndpointPolicy) addSelectionsLocked(i int) {
	e := ep.sp.entries[i]
	for _, pk := range ep.portKeys[i] {
		k := portMapKey(e.dir, pk)
		for id := range e.sel.All() {
			ep.addLocked(k.withIdentity(id), e.deny)
		}
	}
	if ep.peerNamed[i] != nil {
		for id := range e.sel.All() {
			ep.setPeerKeysLocked(i, id, true)
		}
	}
}

// sizeHintLocked returns an upper bound of the number of keys the
// entries give, to size the map state before distilling: per direction
// and port key, the identities the entries with it select, at most every
// known identity and the any-peer key; plus the two keys of directions
// outside default deny. It is exact unless the selections of entries
// with the same port key partly overlap.
func (ep *EndpointPolicy) sizeHintLocked() int {
	perPort := make(map[mapKey]int)
	for i, e := range ep.sp.entries {
		ids := 1
		if e.sel != nil {
			ids = e.sel.Len()
		}
		for _, pk := range ep.portKeys[i] {
			perPort[portMapKey(e.dir, pk)] += ids
		}
	}
	known := len(ep.sp.cache.Identities()) + 1
	n := 2
	for _, ids := range perPort {
		n += min(ids, known)
	}
	return n
}

// shrinkLocked moves the distilled map state to a map of its size when
// hint, the size it was made with, turned out more than twice that, not
// to hold the extra buckets for the endpoint's lifetime.
func (ep *EndpointPolicy) shrinkLocked(hint int) {
	if len(ep.counts) > hint/2 {
		return
	}
	counts := make(map[mapKey]contributions, len(ep.counts))
	maps.Copy(counts, ep.counts)
	ep.counts = counts
}

func (ep *EndpointPolicy) addLocked(k mapKey, deny bool) {
	c, ok := ep.counts[k]
	if ep.tracking {
		ep.remember(k, c, ok)
	}
	if deny {
		c.deny++
	} else {
		c.allow++
	}
	ep.counts[k] = c
}

func (ep *EndpointPolicy) removeLocked(k mapKey, deny bool) {
	c, ok := ep.counts[k]
	if !ok {
		return
	}
	if ep.tracking {
		ep.remember(k, c, ok)
	}
	if deny {
		c.deny--
	} else {
		c.allow--
	}
	if c.allow+c.deny > 0 {
		ep.counts[k] = c
		return
	}
	delete(ep.counts, k)
}

// remember records the value of k, c (present: ok), unless k already
// changed since the last consume.
func (ep *EndpointPolicy) remember(k mapKey, c contributions, ok bool) {
	if _, seen := ep.before[k]; seen {
		return
	}
	if ep.before == nil {
		ep.before = make(map[mapKey]beforeState)
	}
	ep.before[k] = beforeState{entry: c.entry(), present: ok}
}

// forgetChangesLocked forgets the changes recorded since the last
// consume.
func (ep *EndpointPolicy) forgetChangesLocked() {
	if len(ep.before) > smallBefore {
		ep.before = nil
		return
	}
	clear(ep.before)
}
