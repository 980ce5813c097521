package policyapi

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/apiary-net/apiary/policy/labels"
)

// CIDRRule selects peers by address: every address in Prefix and in none
// of Except. It selects only traffic whose identity comes from its
// address (CIDR identities and the reserved world identities), never
// endpoints of a cluster, whose addresses map to their endpoint
// identities: this is Cilium's semantics, and why toCIDR: 10.0.0.0/8 does
// not open the pod network. The engine allocates a CIDR identity for
// Prefix and each Except prefix so that Matches can tell them apart.
type CIDRRule struct {
	// Prefix is the selected network, in canonical (masked) form.
	Prefix netip.Prefix `json:"prefix"`
	// Except are networks inside Prefix that are not selected.
	Except []netip.Prefix `json:"except,omitempty"`
}

// Matches reports whether ls, the labels of a CIDR identity
// (identity.CIDRLabels) or of a reserved world identity, is selected: the
// identity's prefix lies within Prefix and within no Except. A /0 prefix
// also selects the world identity of its own family (world-ipv4 for
// 0.0.0.0/0, world-ipv6 for ::/0), which stands for the addresses of that
// family no CIDR identity covers: the datapath gives exactly these
// identities to ipcache misses. Like Cilium with both families enabled, a
// /0 prefix does not select reserved:world (2); only the world entity does.
func (c CIDRRule) Matches(ls labels.Labels) bool {
	if !c.covers(ls) {
		return false
	}
	for _, e := range c.Except {
		if ls.Has(cidrLabel(e)) {
			return false
		}
	}
	return true
}

func (c CIDRRule) covers(ls labels.Labels) bool {
	if ls.Has(cidrLabel(c.Prefix)) {
		return true
	}
	for _, l := range ls {
		if l.Source == labels.SourceCIDR {
			return false
		}
	}
	if c.Prefix.Bits() != 0 {
		return false
	}
	family := "world-ipv6"
	if c.Prefix.Addr().Is4() {
		family = "world-ipv4"
	}
	return ls.Has(labels.New(labels.SourceReserved, family, ""))
}

// String formats c as "10.0.0.0/8" or "10.0.0.0/8 except 10.1.0.0/16".
func (c CIDRRule) String() string {
	if len(c.Except) == 0 {
		return c.Prefix.String()
	}
	except := make([]string, len(c.Except))
	for i, e := range c.Except {
		except[i] = e.String()
	}
	return c.Prefix.String() + " except " + strings.Join(except, ",")
}

func cidrLabel(p netip.Prefix) labels.Label { return labels.CIDRLabel(p) }

// parsePrefix reads "10.0.0.0/8", or with allowAddr a bare address
// ("192.0.2.1" is 192.0.2.1/32), into a masked prefix.
func parsePrefix(s string, allowAddr bool) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	if allowAddr {
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			return netip.PrefixFrom(a, a.BitLen()), nil
		}
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR prefix", s)
	}
	return netip.Prefix{}, fmt.Errorf("%q is not a CIDR prefix (address/length)", s)
}

// checkExcept checks that except is a network strictly inside prefix.
func checkExcept(prefix, except netip.Prefix) error {
	if except.Addr().Is4() != prefix.Addr().Is4() || except.Bits() <= prefix.Bits() || !prefix.Contains(except.Addr()) {
		return fmt.Errorf("%s is not a network strictly inside %s", except, prefix)
	}
	return nil
}
