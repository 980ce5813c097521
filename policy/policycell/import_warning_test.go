package policycell_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
)

// starWarsPolicy has its description beside spec, as Cilium's demo does.
const starWarsPolicy = `apiVersion: "cilium.io/v2"
kind: CiliumNetworkPolicy
description: "only the empire lands"
metadata:
  name: "rule1"
spec:
  endpointSelector:
    matchLabels: {org: empire, class: deathstar}
  ingress:
  - fromEndpoints:
    - matchLabels: {org: empire}
    toPorts:
    - ports: [{port: "80", protocol: TCP}]
`

// TestImportAcceptsTopLevelDescription imports a policy Cilium accepts
// with its description in the wrong place: the agent applies it (and
// logs the warning), the description kept on the rule.
func TestImportAcceptsTopLevelDescription(t *testing.T) {
	a := startPolicyAgent(t)
	ctx := context.Background()
	if rev, err := a.client.PolicyPut(ctx, []byte(starWarsPolicy)); err != nil || rev != 2 {
		t.Fatalf("PolicyPut = %d, %v; want revision 2", rev, err)
	}
	got, err := a.client.PolicyGet(ctx, nil)
	if err != nil || len(got.Rules) != 1 {
		t.Fatalf("PolicyGet = %+v, %v; want 1 rule", got, err)
	}
	if !strings.Contains(string(got.Rules[0]), `"description": "only the empire lands"`) {
		t.Errorf("rule %s lacks the description", got.Rules[0])
	}
}

// TestPolicyLineFollowsImport: the Policy line shows an import's
// revision at once, not at the next probe round (5 s later).
func TestPolicyLineFollowsImport(t *testing.T) {
	a := startPolicyAgent(t)
	celltest.Eventually(t, "the first Policy line", func() bool {
		return strings.HasPrefix(a.policyLine(t).Message, "0 rules, revision 1,")
	})
	rev, err := a.client.PolicyPut(context.Background(), []byte(starWarsPolicy))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("1 rules, revision %d,", rev)
	celltest.EventuallyWithin(t, want, 2*time.Second, func() bool {
		return strings.HasPrefix(a.policyLine(t).Message, want)
	})
}
