package policy

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/policy/api"
)

// CIDRPrefixes returns every prefix the rules in force name in CIDR
// peers, except lists included, sorted and without duplicates. CIDR
// peers select local CIDR identities (identity.CIDRLabels of a prefix),
// so the caller allocates an identity for each of these prefixes and
// releases those no revision needs any more.
func (r *Repository) CIDRPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, rule := range r.Rules() {
		for _, prs := range [][]api.PeerRule{rule.Ingress, rule.IngressDeny, rule.Egress, rule.EgressDeny} {
			for _, pr := range prs {
				for _, p := range pr.Peers {
					if p.CIDR != nil {
						out = append(out, p.CIDR.Prefix)
						out = append(out, p.CIDR.Except...)
					}
				}
			}
		}
	}
	slices.SortFunc(out, ComparePrefixes)
	return slices.Compact(out)
}

// ComparePrefixes orders prefixes by address, then length.
func ComparePrefixes(a, b netip.Prefix) int {
	return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
}
