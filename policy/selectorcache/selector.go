package selectorcache

import (
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// Selector is a peer selector the cache can hold: it names itself with a
// canonical Key (equal selectors have equal keys) and decides whether an
// identity's labels are selected.
type Selector interface {
	// Key is the canonical form of the selector; the cache shares one
	// CachedSelector among selectors with the same key.
	Key() string
	// Matches reports whether an identity with labels ls is selected.
	Matches(ls labels.Labels) bool
}

// EndpointSelector adapts api.EndpointSelector (endpoint peers and the
// selectors entities stand for) to Selector.
type EndpointSelector struct{ policyapi.EndpointSelector }

// Key returns "sel:" and the selector's canonical string.
func (s EndpointSelector) Key() string { return "sel:" + s.String() }

// CIDRSelector adapts api.CIDRRule to Selector: it selects the CIDR
// identities (and world identities for /0) inside Prefix and outside
// every Except.
type CIDRSelector struct{ policyapi.CIDRRule }

// Key returns "cidr:" and the rule's canonical string.
func (s CIDRSelector) Key() string { return "cidr:" + s.String() }

// PeerSelector returns the selector of a rule peer; ok is false for
// api.PeerAny and for wildcard selectors (the entity all), which select
// every identity and which the engine keys as identity 0 instead.
func PeerSelector(p policyapi.Peer) (sel Selector, ok bool) {
	switch {
	case p.CIDR != nil:
		return CIDRSelector{*p.CIDR}, true
	case p.Selector != nil && !p.Selector.IsWildcard():
		return EndpointSelector{*p.Selector}, true
	}
	return nil, false
}

var (
	_ Selector = EndpointSelector{}
	_ Selector = CIDRSelector{}
)
