package endpointcell_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/labels"
)

// TestIdentityChurnIsIncremental: a new identity the policy selects
// reaches the endpoint's policy map as an incremental change, without a
// full regeneration (no second SyncPolicyMap).
func TestIdentityChurnIsIncremental(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	var regen policy.RegenerationRequests
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(f), celltest.Capture(&regen)})
	a.put(t, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: podLabels})
	if _, err := a.client.PolicyPut(ctx, []byte(webPolicy)); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the policy's regeneration is done", func() bool {
		ep, err := a.client.Endpoint(ctx, 1)
		requests, runs := regen.Stats()
		return err == nil && ep.State == "ready" && ep.Policy.IngressEnforcement && requests > 0 && runs == requests
	})
	syncs := countCalls(f, "SyncPolicyMap 1 ")

	ls := labels.MustParseList("k8s:app=client", "k8s:io.kubernetes.pod.namespace=default")
	id, _, err := a.alloc.AllocateIdentity(ctx, ls)
	if err != nil {
		t.Fatal(err)
	}
	want := policy.Key{Identity: id.ID, Direction: policy.Ingress, Proto: policy.ProtoTCP, Port: 80, PrefixLen: 16}
	celltest.Eventually(t, "web's map allows the new client identity", func() bool {
		m, _ := f.PolicyMap(1)
		_, ok := m[want]
		return ok
	})
	if n := countCalls(f, "ApplyPolicyMapChanges 1 "); n == 0 {
		t.Fatal("no incremental update")
	}
	if n := countCalls(f, "SyncPolicyMap 1 "); n != syncs {
		t.Fatalf("%d full syncs after the identity change, want %d", n, syncs)
	}
	if _, err := a.alloc.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the released identity's key is gone", func() bool {
		m, _ := f.PolicyMap(1)
		_, ok := m[want]
		return !ok
	})
}

func countCalls(f *datapathtest.Fake, prefix string) int {
	n := 0
	for _, c := range f.Calls() {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// denyOnlyPolicy denies app=intruder to web without isolating web
// (enableDefaultDeny off): every other peer stays allowed.
const denyOnlyPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: web-deny, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: web}}
  enableDefaultDeny: {ingress: false, egress: false}
  ingressDeny:
  - fromEndpoints: [{matchLabels: {app: intruder}}]
`

// TestDenyOnlyPolicyEnforces: an endpoint that only deny rules select
// gets ingress enforcement (else the programs would let the denied peer
// pass), also when the denied identity appears after the policy, as an
// incremental change.
func TestDenyOnlyPolicyEnforces(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(f)})
	a.put(t, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: podLabels})
	if _, err := a.client.PolicyPut(ctx, []byte(denyOnlyPolicy)); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "web is regenerated with the deny-only policy", func() bool {
		ep, err := a.client.Endpoint(ctx, 1)
		return err == nil && ep.State == "ready" && ep.Policy.Revision > 1
	})
	if ep, _ := a.client.Endpoint(ctx, 1); ep.Policy.IngressEnforcement || ep.Policy.EgressEnforcement {
		t.Fatalf("enforcement on with nothing to deny yet: %+v", ep.Policy)
	}
	ls := labels.MustParseList("k8s:app=intruder", "k8s:io.kubernetes.pod.namespace=default")
	if _, _, err := a.alloc.AllocateIdentity(ctx, ls); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "web enforces ingress once the intruder identity exists", func() bool {
		ep, err := a.client.Endpoint(ctx, 1)
		return err == nil && ep.State == "ready" && ep.Policy.IngressEnforcement && !ep.Policy.EgressEnforcement
	})
}
