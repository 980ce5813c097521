package identity

import (
	"context"
	"net/netip"

	"github.com/apiary-net/apiary/policy/labels"
)

// Allocator hands out identities for label sets. Label sets made only of
// cidr labels (and reserved:world) get local identities (ScopeLocal);
// every other set gets a global identity from this cluster's range,
// agreed on by every agent through the kvstore (or from a local-only
// allocator in standalone mode).
type Allocator interface {
	// AllocateIdentity returns the identity of lbls, allocating it if
	// needed, and takes a reference; allocated is true when the id is new.
	AllocateIdentity(ctx context.Context, lbls labels.Labels) (id *Identity, allocated bool, err error)
	// Release drops a reference; released is true when it was the last one.
	Release(ctx context.Context, id *Identity) (released bool, err error)
	// LookupIdentity returns the identity of lbls if it is known.
	LookupIdentity(lbls labels.Labels) *Identity
	// LookupIdentityByID returns the identity with id if it is known
	// (reserved, global of any meshed cluster seen, or local).
	LookupIdentityByID(id NumericIdentity) *Identity
	// GetIdentities returns every known identity, sorted by id.
	GetIdentities() []*Identity
	// WaitForInitialGlobalIdentities waits until the global identities
	// of this cluster have been listed once.
	WaitForInitialGlobalIdentities(ctx context.Context) error
}

// ChangeKind says whether an identity appeared or went away.
type ChangeKind int

// Change kinds.
const (
	Added ChangeKind = iota
	Deleted
)

// Change is one identity appearing or going away.
type Change struct {
	Kind     ChangeKind
	Identity *Identity
}

// Observer is told about identity changes, in order and in batches; the
// selector cache is one. Register with ObserverOut.
type Observer interface {
	OnIdentitiesChanged(changes []Change)
}

// CIDRLabels returns the labels of a CIDR identity: cidr:<prefix>, every
// shorter prefix covering it, and reserved:world.
func CIDRLabels(prefix netip.Prefix) labels.Labels {
	prefix = prefix.Masked()
	ls := make([]labels.Label, 0, prefix.Bits()+2)
	for bits := prefix.Bits(); bits >= 0; bits-- {
		p, _ := prefix.Addr().Prefix(bits)
		ls = append(ls, labels.CIDRLabel(p))
	}
	ls = append(ls, labels.New(labels.SourceReserved, reservedNames[ReservedWorld], ""))
	return labels.FromSlice(ls)
}

// IsCIDRLabels reports whether lbls are the labels of a local CIDR
// identity (only cidr labels, plus reserved:world).
func IsCIDRLabels(lbls labels.Labels) bool {
	hasCIDR := false
	for _, l := range lbls {
		switch {
		case l.Source == labels.SourceCIDR:
			hasCIDR = true
		case l.Source == labels.SourceReserved && l.Key == reservedNames[ReservedWorld]:
		default:
			return false
		}
	}
	return hasCIDR
}
