package policy_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

const twoPolicies = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: one, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: db}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: employee}}]
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: two, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: db}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: stranger}}]
`

func origin(name string) labels.Labels {
	return labels.FromSlice([]labels.Label{
		labels.New(labels.SourceK8s, policyapi.LabelPolicyName, name),
		labels.New(labels.SourceK8s, policyapi.LabelPolicyNamespace, "default"),
	})
}

func TestRepositoryChanges(t *testing.T) {
	rules := parseRules(t, twoPolicies)
	tests := []struct {
		name        string
		give        func(*policy.Repository) int
		wantRules   int
		wantDeleted int
		wantAllowed map[string]bool // peer app -> ingress verdict for db
	}{
		{
			name:        "add",
			give:        func(*policy.Repository) int { return 0 },
			wantRules:   2,
			wantAllowed: map[string]bool{"employee": true, "stranger": true},
		},
		{
			name: "delete by labels",
			give: func(r *policy.Repository) int {
				_, n := r.DeleteByLabels(origin("one"))
				return n
			},
			wantRules: 1, wantDeleted: 1,
			wantAllowed: map[string]bool{"employee": false, "stranger": true},
		},
		{
			name: "delete by labels matching nothing",
			give: func(r *policy.Repository) int {
				_, n := r.DeleteByLabels(origin("three"))
				return n
			},
			wantRules:   2,
			wantAllowed: map[string]bool{"employee": true, "stranger": true},
		},
		{
			name: "delete by namespace label deletes both",
			give: func(r *policy.Repository) int {
				_, n := r.DeleteByLabels(labels.Labels{labels.New(labels.SourceK8s, policyapi.LabelPolicyNamespace, "default")})
				return n
			},
			wantRules: 0, wantDeleted: 2,
			wantAllowed: map[string]bool{"employee": true, "stranger": true},
		},
		{
			name: "delete by no labels deletes nothing",
			give: func(r *policy.Repository) int {
				_, n := r.DeleteByLabels(nil)
				return n
			},
			wantRules:   2,
			wantAllowed: map[string]bool{"employee": true, "stranger": true},
		},
		{
			name: "replace by labels",
			give: func(r *policy.Repository) int {
				r.ReplaceByLabels(origin("two"), parseRules(t, cnpHeader+"  ingress:\n  - fromEndpoints: [{matchLabels: {app: nobody}}]\n")...)
				return 0
			},
			wantRules:   2,
			wantAllowed: map[string]bool{"employee": true, "stranger": false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(db, employee, stranger)
			rev := e.repo.Add(rules...)
			if got := tt.give(e.repo); got != tt.wantDeleted {
				t.Errorf("deleted %d rules, want %d", got, tt.wantDeleted)
			}
			if got := len(e.repo.Rules()); got != tt.wantRules {
				t.Errorf("%d rules, want %d", got, tt.wantRules)
			}
			if tt.name != "add" && e.repo.Revision() != rev+1 {
				t.Errorf("revision %d, want %d", e.repo.Revision(), rev+1)
			}
			ms := e.endpoint(db).MapState()
			for app, want := range tt.wantAllowed {
				id := employee.ID
				if app == "stranger" {
					id = stranger.ID
				}
				if got := policy.Verdict(ms, id, policy.Ingress, policy.ProtoTCP, 80); got != want {
					t.Errorf("ingress from %s allowed = %v, want %v", app, got, want)
				}
			}
		})
	}
}

func TestWaitForRevision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		repo := policy.NewRepository(selectorcache.New())
		start := repo.Revision()
		done := make(chan error, 1)
		go func() { done <- repo.WaitForRevision(context.Background(), start+2) }()
		repo.Add()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("WaitForRevision returned %v after one of two revisions", err)
		default:
		}
		repo.Add()
		if err := <-done; err != nil {
			t.Fatalf("WaitForRevision: %v", err)
		}

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := repo.WaitForRevision(ctx, start+100); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitForRevision with a cancelled context = %v, want context.Canceled", err)
		}
		if err := repo.WaitForRevision(ctx, start); err != nil {
			t.Errorf("WaitForRevision for a past revision = %v, want nil", err)
		}
	})
}

func TestResolveIsShared(t *testing.T) {
	e := newEngine(db)
	e.repo.Add(parseRules(t, twoPolicies)...)
	first := e.repo.Resolve(db)
	if e.repo.Resolve(db) != first {
		t.Error("Resolve twice at one revision returned different policies")
	}
	e.repo.Add()
	if e.repo.Resolve(db) == first {
		t.Error("Resolve after a revision change returned the stale policy")
	}
}

func TestStalePolicyFollowsIdentities(t *testing.T) {
	e := newEngine(db)
	e.repo.Add(parseRules(t, twoPolicies)...)
	stale := e.repo.Resolve(db)
	e.repo.Add()
	ep := stale.DistillPolicy(nil)
	e.cache.OnIdentitiesChanged(added(employee))
	if !policy.Verdict(ep.MapState(), employee.ID, policy.Ingress, policy.ProtoTCP, 80) {
		t.Error("endpoint of a released stale policy did not follow an identity it selects")
	}
	ep.Detach()
	if n := e.cache.Len(); n != 0 {
		t.Errorf("%d selectors cached after the stale policy's last endpoint detached, want 0", n)
	}
}
