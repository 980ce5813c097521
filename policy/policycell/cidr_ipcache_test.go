package policycell_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/source"
)

const toCIDRPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: to-cidr, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: client}}
  egress:
  - toCIDRSet: [{cidr: 10.0.0.0/8, except: [10.96.0.0/12]}]
  - toCIDR: ["2001:db8::/32"]
`

// TestPolicyPrefixesInIPCache: every prefix a policy names is an ipcache
// entry with its CIDR identity, so an address in it that is no endpoint
// gets that identity in the datapath (not world); deleting the policy
// withdraws them.
func TestPolicyPrefixesInIPCache(t *testing.T) {
	a := startPodAgent(t, toCIDRPolicy)
	for _, tc := range []struct{ addr, prefix string }{
		{"10.1.2.3", "10.0.0.0/8"}, {"10.96.0.1", "10.96.0.0/12"}, {"2001:db8::1", "2001:db8::/32"},
	} {
		want := identity.CIDRLabels(netip.MustParsePrefix(tc.prefix))
		celltest.Eventually(t, tc.addr+" resolves to the identity of "+tc.prefix, func() bool {
			e, ok := a.ipc.LookupByIP(netip.MustParseAddr(tc.addr))
			if !ok || e.Source != source.Generated {
				return false
			}
			id := a.alloc.LookupIdentityByID(e.Identity)
			return id != nil && id.Labels.Equal(want)
		})
	}
	if _, err := a.client.PolicyDelete(context.Background(), []string{"k8s:io.cilium.k8s.policy.name=to-cidr"}); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the prefixes are withdrawn", func() bool {
		_, ok := a.ipc.LookupByIP(netip.MustParseAddr("10.1.2.3"))
		return !ok
	})
}
