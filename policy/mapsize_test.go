package policy_test

import (
	"fmt"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
)

// TestMapStateSizeWithManyIdentities is cilium/cilium#8060: with 10,000
// identities, an endpoint that no rule selects, or that a rule lets
// everything reach, needs a handful of policy map keys (wildcards), not
// one per identity and direction; only a peer that really selects each
// identity (the cluster entity) costs a key per identity.
func TestMapStateSizeWithManyIdentities(t *testing.T) {
	idents := make([]*identity.Identity, 10000)
	for i := range idents {
		idents[i] = pod(identity.NumericIdentity(1000+i), fmt.Sprintf("app=a%d", i%100), fmt.Sprintf("instance=i%d", i))
	}
	e := newEngine(idents...)
	subject := pod(500, "app=subject")
	e.cache.OnIdentitiesChanged(added(subject))
	size := func() int {
		ep := e.endpoint(subject)
		defer ep.Detach()
		return ep.Len()
	}
	if n := size(); n != 2 {
		t.Errorf("no policy: %d keys, want 2 (allow all, each direction)", n)
	}
	for _, tc := range []struct {
		name, peers string
		min, max    int
	}{
		{"fromEntities all", "fromEntities: [all]", 2, 2},
		// In a namespaced policy {} is every pod of the namespace (and
		// local cluster): all 10,000 here, one key each.
		{"fromEndpoints {}", "fromEndpoints: [{}]", 10001, 10020},
		{"fromEntities cluster", "fromEntities: [cluster]", 10001, 10020},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := parseRules(t, "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: p, namespace: default}\n"+
				"spec:\n  endpointSelector: {matchLabels: {app: subject}}\n  ingress:\n  - "+tc.peers+"\n")
			e.repo.ReplaceByLabels(rules[0].Labels, rules...)
			if n := size(); n < tc.min || n > tc.max {
				t.Errorf("%s: %d keys, want %d..%d", tc.peers, n, tc.min, tc.max)
			}
		})
	}
}
