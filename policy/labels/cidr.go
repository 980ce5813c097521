package labels

import (
	"fmt"
	"net/netip"
	"strings"
)

// CIDRKey is the key of the cidr: label of prefix p, in Cilium's form:
// the masked prefix, with the colons of an IPv6 address turned into '-'
// (selector keys cannot hold ':') and a '0' added where the address would
// start or end with '-': 10.0.0.0/8, 2001-db8--0/32, 0--0/0.
func CIDRKey(p netip.Prefix) string {
	p = p.Masked()
	addr := p.Addr().String()
	if p.Addr().Is6() {
		addr = strings.ReplaceAll(addr, ":", "-")
		if strings.HasPrefix(addr, "-") {
			addr = "0" + addr
		}
		if strings.HasSuffix(addr, "-") {
			addr += "0"
		}
	}
	return fmt.Sprintf("%s/%d", addr, p.Bits())
}

// CIDRLabel is the cidr: label of prefix p.
func CIDRLabel(p netip.Prefix) Label { return New(SourceCIDR, CIDRKey(p), "") }

// ParseCIDRKey reads the key of a cidr: label, in Cilium's form
// (2001-db8--0/32) or with colons (2001:db8::/32), into a masked prefix.
func ParseCIDRKey(key string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(key)
	if err != nil && strings.Contains(key, "-") {
		p, err = netip.ParsePrefix(strings.ReplaceAll(key, "-", ":"))
	}
	if err != nil || p.Addr().Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR prefix", key)
	}
	return p.Masked(), nil
}
