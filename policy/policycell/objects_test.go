package policycell_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// k8sObject parses a CiliumNetworkPolicy default/name selecting app,
// with an egress CIDR peer when cidr is set.
func k8sObject(t *testing.T, name, cidr string) *policyapi.Policy {
	t.Helper()
	doc := "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: " + name + ", namespace: default}\n" +
		"spec:\n  endpointSelector: {matchLabels: {app: " + name + "}}\n  ingress: [{fromEndpoints: [{matchLabels: {app: x}}]}]\n"
	if cidr != "" {
		doc += "  egress: [{toCIDR: [" + cidr + "]}]\n"
	}
	pols, err := policyapi.ParseDocuments("kubernetes "+name, []byte(doc), policyapi.DefaultOptions())
	if err != nil || len(pols) != 1 {
		t.Fatalf("parse %s: %d policies, %v", name, len(pols), err)
	}
	return pols[0]
}

func cnpKey(name string) policy.ObjectKey {
	return policy.ObjectKey{Kind: policyapi.KindCiliumNetworkPolicy, Namespace: "default", Name: name}
}

// TestObjectsApplyBatch: a batch (a watcher's initial listing) applies
// every good object in one revision with one regeneration request,
// records the bad one, named in status, and allocates the CIDR
// identities of its prefixes; deleting one object afterwards removes
// exactly its rules; a later batch mixes deletes, upserts and a fix.
func TestObjectsApplyBatch(t *testing.T) {
	a := startPolicyAgent(t)
	objects := a.objects
	ctx := context.Background()
	rev0 := a.repo.Revision()

	refused := errors.New("spec.ingress[0].toPorts[0].ports[0].port: 99999 is not a port")
	rev, err := objects.Apply(ctx, "listing", policy.Batch{
		Upserts: []*policyapi.Policy{k8sObject(t, "a", "10.1.0.0/16"), k8sObject(t, "b", ""), k8sObject(t, "c", "10.2.0.0/16")},
		Rejects: []policy.Rejection{{Key: cnpKey("bad"), Err: refused}},
	})
	if err != nil || rev != rev0+1 {
		t.Fatalf("Apply = %d, %v; want revision %d", rev, err, rev0+1)
	}
	if got := a.ruleNames(); got != "a,b,c" {
		t.Fatalf("rules after the batch: %s, want a,b,c", got)
	}
	if requests, _ := a.regen.Stats(); requests != 1 {
		t.Errorf("regeneration requests after one batch = %d, want 1", requests)
	}
	a.waitPolicyLine(t, "after the batch", func(line models.StatusEntry) bool {
		return line.State == models.StateWarning &&
			strings.Contains(line.Message, "3 Kubernetes objects, rejected: CiliumNetworkPolicy default/bad") &&
			slices.Contains(line.Details, "2 CIDR identities for policy prefixes") &&
			slices.ContainsFunc(line.Details, func(d string) bool { return strings.Contains(d, "default/bad rejected: "+refused.Error()) })
	})

	if _, err := objects.Delete(ctx, cnpKey("a")); err != nil {
		t.Fatal(err)
	}
	if got := a.ruleNames(); got != "b,c" {
		t.Fatalf("rules after deleting a: %s, want b,c", got)
	}
	a.waitPolicyLine(t, "after deleting a", func(line models.StatusEntry) bool {
		return slices.Contains(line.Details, "1 CIDR identities for policy prefixes")
	})

	_, err = objects.Apply(ctx, "changes", policy.Batch{
		Upserts: []*policyapi.Policy{k8sObject(t, "bad", ""), k8sObject(t, "c", "")},
		Deletes: []policy.ObjectKey{cnpKey("b")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.ruleNames(); got != "bad,c" {
		t.Fatalf("rules after the second batch: %s, want bad,c", got)
	}
	a.waitPolicyLine(t, "after the second batch", func(line models.StatusEntry) bool {
		return line.State == models.StateOk && strings.Contains(line.Message, "2 Kubernetes objects") &&
			slices.Contains(line.Details, "0 CIDR identities for policy prefixes")
	})

	rev = a.repo.Revision()
	_, err = objects.Apply(ctx, "twice", policy.Batch{
		Upserts: []*policyapi.Policy{k8sObject(t, "d", "")},
		Rejects: []policy.Rejection{{Key: cnpKey("d"), Err: refused}},
	})
	if err == nil || !strings.Contains(err.Error(), "CiliumNetworkPolicy default/d appears twice") {
		t.Fatalf("batch naming an object twice: %v, want it refused naming it", err)
	}
	if a.repo.Revision() != rev || a.ruleNames() != "bad,c" {
		t.Fatalf("a refused batch changed the repository: revision %d (was %d), rules %s", a.repo.Revision(), rev, a.ruleNames())
	}
}

// waitPolicyLine waits until the "Policy" status line (probed in the
// background) satisfies ok.
func (a *policyAgent) waitPolicyLine(t *testing.T, when string, ok func(models.StatusEntry) bool) {
	t.Helper()
	var last models.StatusEntry
	celltest.Eventually(t, "the Policy line "+when, func() bool {
		last = a.policyLine(t)
		return ok(last)
	})
	if !ok(last) {
		t.Fatalf("Policy line %s: %+v", when, last)
	}
}
