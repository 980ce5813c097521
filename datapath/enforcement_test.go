package datapath_test

import (
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy"
)

func TestPolicyEnforced(t *testing.T) {
	allowAll := func(dir policy.Direction) policy.Key { return policy.Key{Direction: dir} }
	denyEgress := policy.Key{Identity: 300, Direction: policy.Egress, Proto: policy.ProtoTCP, Port: 80, PrefixLen: 16}
	for _, tt := range []struct {
		name        string
		give        policy.MapState
		defaultDeny bool
		want        [2]bool // ingress, egress
	}{
		{"no policy", policy.MapState{allowAll(policy.Ingress): {}, allowAll(policy.Egress): {}}, false, [2]bool{false, false}},
		{"default deny", policy.MapState{}, true, [2]bool{true, true}},
		{"deny key without default deny", policy.MapState{allowAll(policy.Ingress): {}, allowAll(policy.Egress): {}, denyEgress: {Deny: true}},
			false, [2]bool{false, true}},
		{"allow key without default deny", policy.MapState{allowAll(policy.Egress): {}, denyEgress: {}}, false, [2]bool{false, false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, dir := range []policy.Direction{policy.Ingress, policy.Egress} {
				if got := datapath.PolicyEnforced(tt.give, dir, tt.defaultDeny); got != tt.want[dir] {
					t.Errorf("%v: got %v, want %v", dir, got, tt.want[dir])
				}
			}
		})
	}
}
