package policyapi_test

import (
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

func TestCIDRRuleMatches(t *testing.T) {
	tenNet := policyapi.CIDRRule{
		Prefix: netip.MustParsePrefix("10.0.0.0/8"),
		Except: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12")},
	}
	v4World := policyapi.CIDRRule{Prefix: netip.MustParsePrefix("0.0.0.0/0")}
	v6Net := policyapi.CIDRRule{Prefix: netip.MustParsePrefix("2001:db8::/32")}
	v6World := policyapi.CIDRRule{Prefix: netip.MustParsePrefix("::/0")}
	for _, tc := range []struct {
		name string
		rule policyapi.CIDRRule
		give labels.Labels
		want bool
	}{
		{"the prefix itself", tenNet, cidr("10.0.0.0/8"), true},
		{"a longer prefix inside", tenNet, cidr("10.1.2.3/32"), true},
		{"outside", tenNet, cidr("192.0.2.1/32"), false},
		{"a shorter prefix around it", tenNet, cidr("10.0.0.0/7"), false},
		{"inside the exception", tenNet, cidr("10.100.0.1/32"), false},
		{"the exception itself", tenNet, cidr("10.96.0.0/12"), false},
		{"a pod is never a CIDR peer", tenNet, pod(t, "cluster1", "default"), false},
		{"world without a CIDR identity", tenNet, reserved(identity.ReservedWorld), false},
		{"/0 does not select world (only the world entity does)", v4World, reserved(identity.ReservedWorld), false},
		{"/0 selects world-ipv4", v4World, reserved(identity.ReservedWorldIPv4), true},
		{"/0 does not select world-ipv6", v4World, reserved(identity.ReservedWorldIPv6), false},
		{"/0 does not select IPv6 CIDRs", v4World, cidr("2001:db8::/64"), false},
		{"/0 selects IPv4 CIDRs", v4World, cidr("203.0.113.0/24"), true},
		{"::/0 selects world-ipv6", v6World, reserved(identity.ReservedWorldIPv6), true},
		{"::/0 does not select world-ipv4", v6World, reserved(identity.ReservedWorldIPv4), false},
		{"::/0 does not select world", v6World, reserved(identity.ReservedWorld), false},
		{"::/0 does not select IPv4 CIDRs", v6World, cidr("203.0.113.0/24"), false},
		{"IPv6 inside", v6Net, cidr("2001:db8:1::/48"), true},
		{"IPv6 outside", v6Net, cidr("2001:db9::/32"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.Matches(tc.give); got != tc.want {
				t.Errorf("%s Matches(%s) = %v, want %v", tc.rule, tc.give, got, tc.want)
			}
		})
	}
	if got := tenNet.String(); got != "10.0.0.0/8 except 10.96.0.0/12" {
		t.Errorf("String() = %q", got)
	}
}
