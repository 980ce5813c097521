package policy_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
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

// TestCIDRPrefixesCounted: a prefix stays while any rule in force names
// it and goes with the last one, through every kind of change.
func TestCIDRPrefixesCounted(t *testing.T) {
	e := newEngine()
	rule := func(name, cidr string) []*policyapi.Rule {
		doc := strings.Replace(cnpHeader, "name: test", "name: "+name, 1) + "  egress:\n  - toCIDR: [" + cidr + "]\n"
		return parseRules(t, doc)
	}
	a, b := rule("a", "10.0.0.0/8"), rule("b", "10.0.0.0/8, 192.0.2.0/24")
	steps := []struct {
		name   string
		change func()
		want   []string
	}{
		{"add a", func() { e.repo.Add(a...) }, []string{"10.0.0.0/8"}},
		{"add a again", func() { e.repo.Add(a...) }, []string{"10.0.0.0/8"}},
		{"add b", func() { e.repo.Add(b...) }, []string{"10.0.0.0/8", "192.0.2.0/24"}},
		{"delete a", func() { e.repo.DeleteByLabels(a[0].Labels) }, []string{"10.0.0.0/8", "192.0.2.0/24"}},
		{"replace b", func() { e.repo.ReplaceByLabels(b[0].Labels, rule("b", "198.51.100.0/24")...) }, []string{"198.51.100.0/24"}},
		{"replace any", func() { e.repo.ReplaceMatchingAny([]labels.Labels{b[0].Labels}) }, nil},
	}
	for _, st := range steps {
		st.change()
		var want []netip.Prefix
		for _, s := range st.want {
			want = append(want, netip.MustParsePrefix(s))
		}
		if got := e.repo.CIDRPrefixes(); !slices.Equal(got, want) {
			t.Fatalf("after %s: CIDRPrefixes() = %v, want %v", st.name, got, want)
		}
	}
}
