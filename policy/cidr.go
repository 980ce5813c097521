package policy

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// CIDRPrefixes returns every prefix the rules in force name in CIDR
// peers, except lists included, sorted and without duplicates. CIDR
// peers select local CIDR identities (identity.CIDRLabels of a prefix),
// so the caller allocates an identity for each of these prefixes and
// releases those no revision needs any more.
//
// The repository counts the rules naming each prefix as they are added
// and deleted, so this costs the number of distinct prefixes, not of
// rules: the policy cell calls it after every change.
func (r *Repository) CIDRPrefixes() []netip.Prefix {
	r.mu.Lock()
	out := make([]netip.Prefix, 0, len(r.rules.prefixes))
	for p := range r.rules.prefixes {
		out = append(out, p)
	}
	r.mu.Unlock()
	slices.SortFunc(out, ComparePrefixes)
	return out
}

// rulePrefixes calls fn for each prefix rule names in a CIDR peer, except
// lists included, once per mention.
func rulePrefixes(rule *policyapi.Rule, fn func(netip.Prefix)) {
	for _, prs := range [][]policyapi.PeerRule{rule.Ingress, rule.IngressDeny, rule.Egress, rule.EgressDeny} {
		for _, pr := range prs {
			for _, p := range pr.Peers {
				if p.CIDR != nil {
					fn(p.CIDR.Prefix)
					for _, e := range p.CIDR.Except {
						fn(e)
					}
				}
			}
		}
	}
}

// ComparePrefixes orders prefixes by address, then length.
func ComparePrefixes(a, b netip.Prefix) int {
	return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
}
