package identity

import (
	"fmt"
	"strconv"

	"github.com/apiary-net/apiary/policy/labels"
)

// NumericIdentity is a security identity as carried in packets and maps.
type NumericIdentity uint32

// Reserved identities, with Cilium's numbers.
const (
	IdentityUnknown       NumericIdentity = 0
	ReservedHost          NumericIdentity = 1
	ReservedWorld         NumericIdentity = 2
	ReservedUnmanaged     NumericIdentity = 3
	ReservedHealth        NumericIdentity = 4
	ReservedInit          NumericIdentity = 5
	ReservedRemoteNode    NumericIdentity = 6
	ReservedKubeAPIServer NumericIdentity = 7
	ReservedIngress       NumericIdentity = 8
	ReservedWorldIPv4     NumericIdentity = 9
	ReservedWorldIPv6     NumericIdentity = 10
)

// Scopes: the top byte of an identity says where it is valid.
const (
	// ScopeGlobal identities are allocated through the kvstore and valid
	// in every agent of every meshed cluster.
	ScopeGlobal NumericIdentity = 0
	// ScopeLocal identities (CIDR identities) are valid on one node only.
	ScopeLocal NumericIdentity = 1 << 24
	// ScopeRemoteNode identities are per-node identities of remote nodes.
	ScopeRemoteNode NumericIdentity = 2 << 24
	// scopeMask selects the scope bits.
	scopeMask NumericIdentity = 0xff << 24
)

// MinAllocationIdentity is the first id the global allocator hands out
// within a cluster's range (ids below are reserved).
const MinAllocationIdentity = 256

var reservedNames = map[NumericIdentity]string{
	ReservedHost:          "host",
	ReservedWorld:         "world",
	ReservedUnmanaged:     "unmanaged",
	ReservedHealth:        "health",
	ReservedInit:          "init",
	ReservedRemoteNode:    "remote-node",
	ReservedKubeAPIServer: "kube-apiserver",
	ReservedIngress:       "ingress",
	ReservedWorldIPv4:     "world-ipv4",
	ReservedWorldIPv6:     "world-ipv6",
}

var reservedByName = func() map[string]NumericIdentity {
	m := make(map[string]NumericIdentity, len(reservedNames))
	for id, n := range reservedNames {
		m[n] = id
	}
	return m
}()

// IsReserved reports whether id is one of the reserved identities.
func (id NumericIdentity) IsReserved() bool {
	_, ok := reservedNames[id]
	return ok
}

// Scope returns the identity's scope (ScopeGlobal, ScopeLocal, ...).
func (id NumericIdentity) Scope() NumericIdentity { return id & scopeMask }

// ScopeName names the scope for `apiary identity get`.
func (id NumericIdentity) ScopeName() string {
	switch {
	case id.IsReserved():
		return "reserved"
	case id.Scope() == ScopeLocal:
		return "local"
	case id.Scope() == ScopeRemoteNode:
		return "remote-node"
	case id.Scope() == ScopeGlobal:
		return "global"
	}
	return "unknown"
}

// String formats the id as a number ("reserved:host" style names are for
// labels, not ids).
func (id NumericIdentity) String() string { return strconv.FormatUint(uint64(id), 10) }

// ParseNumericIdentity reads a decimal id or a reserved name ("world").
func ParseNumericIdentity(s string) (NumericIdentity, error) {
	if id, ok := reservedByName[s]; ok {
		return id, nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("identity %q is neither a number nor a reserved name", s)
	}
	return NumericIdentity(n), nil
}

// ReservedByName returns the reserved identity named name ("host",
// "world", ...).
func ReservedByName(name string) (NumericIdentity, bool) {
	id, ok := reservedByName[name]
	return id, ok
}

// ReservedName returns the name of a reserved identity ("" otherwise).
func (id NumericIdentity) ReservedName() string { return reservedNames[id] }

// ReservedLabels returns the labels of a reserved identity.
func ReservedLabels(id NumericIdentity) labels.Labels {
	name, ok := reservedNames[id]
	if !ok {
		return nil
	}
	return labels.Labels{labels.New(labels.SourceReserved, name, "")}
}

// ReservedIdentities returns every reserved identity.
func ReservedIdentities() []*Identity {
	out := make([]*Identity, 0, len(reservedNames))
	for id := ReservedHost; id <= ReservedWorldIPv6; id++ {
		out = append(out, &Identity{ID: id, Labels: ReservedLabels(id)})
	}
	return out
}

// Identity is a numeric identity with its labels.
type Identity struct {
	ID     NumericIdentity `json:"id"`
	Labels labels.Labels   `json:"labels"`
}
