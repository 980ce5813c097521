package policy_test

import (
	"net/netip"
	"slices"
	"testing"
)

func TestCIDRPrefixes(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []string
	}{
		{"none", "  ingress:\n  - fromEntities: [world]\n", nil},
		{
			name: "cidr sets with except, deduplicated",
			give: "  egress:\n  - toCIDRSet:\n    - cidr: 10.0.0.0/8\n      except: [10.1.0.0/16]\n  egressDeny:\n  - toCIDR: [10.0.0.0/8, 192.0.2.1]\n",
			want: []string{"10.0.0.0/8", "10.1.0.0/16", "192.0.2.1/32"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine()
			e.repo.Add(parseRules(t, cnpHeader+tt.give)...)
			var want []netip.Prefix
			for _, s := range tt.want {
				want = append(want, netip.MustParsePrefix(s))
			}
			if got := e.repo.CIDRPrefixes(); !slices.Equal(got, want) {
				t.Errorf("CIDRPrefixes() = %v, want %v", got, want)
			}
		})
	}
}
