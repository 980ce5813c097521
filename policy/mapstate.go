package policy

import (
	"fmt"
	"maps"

	"github.com/apiary-net/apiary/policy/identity"
)

// Direction is the traffic direction of a map-state key, seen from the
// endpoint.
type Direction uint8

// Directions.
const (
	Ingress Direction = iota
	Egress
)

// String returns "ingress" or "egress".
func (d Direction) String() string {
	if d == Egress {
		return "egress"
	}
	return "ingress"
}

// Proto is an IP protocol number; ProtoAny (0) in a key matches every
// protocol, ICMP included.
type Proto uint8

// Protocols the engine keys.
const (
	ProtoAny    Proto = 0
	ProtoICMP   Proto = 1
	ProtoTCP    Proto = 6
	ProtoUDP    Proto = 17
	ProtoICMPv6 Proto = 58
	ProtoSCTP   Proto = 132
)

// Key is one map-state key, as in Cilium's policy map: the peer identity
// (0 is any peer), the direction, the protocol (0 any), and a port with
// a prefix length: the key covers the ports whose top PrefixLen bits
// equal Port's (16 is one port, 0 every port). ICMP keys carry the ICMP
// type as the port.
type Key struct {
	Identity  identity.NumericIdentity
	Direction Direction
	Proto     Proto
	Port      uint16
	PrefixLen uint8
}

// String formats the key for test failures and dumps.
func (k Key) String() string {
	return fmt.Sprintf("%s id=%d proto=%d port=%d/%d", k.Direction, k.Identity, k.Proto, k.Port, k.PrefixLen)
}

// coversPort reports whether the key's port prefix covers port.
func (k Key) coversPort(port uint16) bool {
	mask := portMask(k.PrefixLen)
	return port&mask == k.Port&mask
}

func portMask(prefixLen uint8) uint16 {
	if prefixLen == 0 {
		return 0
	}
	return ^uint16(0) << (16 - prefixLen)
}

// Entry is the verdict of a key.
type Entry struct {
	// Deny is true for a deny entry; deny wins over allow.
	Deny bool
}

// MapState is an endpoint's resolved policy: the verdict of every key.
// Traffic no key covers is denied (an endpoint outside default deny in a
// direction has an allow key for any peer in it).
type MapState map[Key]Entry

// Clone returns a copy of m.
func (m MapState) Clone() MapState { return maps.Clone(m) }

// Equal reports whether m and other hold the same entries.
func (m MapState) Equal(other MapState) bool { return maps.Equal(m, other) }

// Apply applies a delta (from EndpointPolicy.ConsumeMapChanges) to m.
func (m MapState) Apply(ch MapChanges) {
	for _, k := range ch.Deletes {
		delete(m, k)
	}
	maps.Copy(m, ch.Adds)
}

// MapChanges is the difference between two map states: keys to delete,
// then keys to add or overwrite.
type MapChanges struct {
	Adds    map[Key]Entry
	Deletes []Key
}

// Len returns the number of changed keys.
func (c MapChanges) Len() int { return len(c.Adds) + len(c.Deletes) }

// Diff returns the changes that turn m into next, for writing a
// regenerated endpoint's map state to the datapath incrementally.
func (m MapState) Diff(next MapState) MapChanges {
	ch := MapChanges{Adds: make(map[Key]Entry)}
	for k := range m {
		if _, ok := next[k]; !ok {
			ch.Deletes = append(ch.Deletes, k)
		}
	}
	for k, e := range next {
		if old, ok := m[k]; !ok || old != e {
			ch.Adds[k] = e
		}
	}
	return ch
}
