package policyapi_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

func TestRequirementMatches(t *testing.T) {
	web := labels.MustParseList("k8s:app=web", "container:team=a")
	for _, tc := range []struct {
		name string
		give policyapi.Requirement
		ls   labels.Labels
		want bool
	}{
		{"any source matches k8s", policyapi.Requirement{Source: "any", Key: "app", Operator: policyapi.OpIn, Values: []string{"web"}}, web, true},
		{"same source", policyapi.Requirement{Source: "k8s", Key: "app", Operator: policyapi.OpIn, Values: []string{"db", "web"}}, web, true},
		{"other source", policyapi.Requirement{Source: "k8s", Key: "team", Operator: policyapi.OpIn, Values: []string{"a"}}, web, false},
		{"other value", policyapi.Requirement{Source: "any", Key: "app", Operator: policyapi.OpIn, Values: []string{"db"}}, web, false},
		{"notin absent key", policyapi.Requirement{Source: "k8s", Key: "tier", Operator: policyapi.OpNotIn, Values: []string{"x"}}, web, true},
		{"notin other source counts as absent", policyapi.Requirement{Source: "k8s", Key: "team", Operator: policyapi.OpNotIn, Values: []string{"a"}}, web, true},
		{"notin listed value", policyapi.Requirement{Source: "any", Key: "app", Operator: policyapi.OpNotIn, Values: []string{"web"}}, web, false},
		{"exists", policyapi.Requirement{Source: "any", Key: "team", Operator: policyapi.OpExists}, web, true},
		{"exists wrong source", policyapi.Requirement{Source: "k8s", Key: "team", Operator: policyapi.OpExists}, web, false},
		{"does not exist", policyapi.Requirement{Source: "any", Key: "tier", Operator: policyapi.OpDoesNotExist}, web, true},
		{"does not exist present", policyapi.Requirement{Source: "any", Key: "app", Operator: policyapi.OpDoesNotExist}, web, false},
		{"reserved label", policyapi.Requirement{Source: "reserved", Key: "host", Operator: policyapi.OpIn, Values: []string{""}}, identity.ReservedLabels(identity.ReservedHost), true},
		{"unknown operator", policyapi.Requirement{Source: "any", Key: "app", Operator: "Like", Values: []string{"web"}}, web, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.give.Matches(tc.ls); got != tc.want {
				t.Errorf("%s Matches(%s) = %v, want %v", tc.give, tc.ls, got, tc.want)
			}
		})
	}
}

func TestSelectorIsCanonical(t *testing.T) {
	a := policyapi.NewSelector(
		policyapi.Requirement{Source: "k8s", Key: "tier", Operator: policyapi.OpIn, Values: []string{"b", "a", "b"}},
		policyapi.Requirement{Source: "any", Key: "app", Operator: policyapi.OpIn, Values: []string{"web"}},
		policyapi.Requirement{Source: "k8s", Key: "old", Operator: policyapi.OpDoesNotExist},
		policyapi.Requirement{Source: "any", Key: "app", Operator: policyapi.OpIn, Values: []string{"web"}},
	)
	b := policyapi.NewSelector(
		policyapi.Requirement{Source: "k8s", Key: "old", Operator: policyapi.OpDoesNotExist},
		policyapi.Requirement{Source: "k8s", Key: "tier", Operator: policyapi.OpIn, Values: []string{"a", "b"}},
		policyapi.Requirement{Source: "any", Key: "app", Operator: policyapi.OpIn, Values: []string{"web"}},
	)
	const want = "any:app=web,!k8s:old,k8s:tier in (a,b)"
	if a.String() != want || !a.Equal(b) {
		t.Errorf("selectors %q and %q, want both %q", a, b, want)
	}
	reqs := a.Requirements()
	reqs[0].Values[0] = "changed"
	if a.String() != want {
		t.Errorf("changing Requirements() changed the selector to %q", a)
	}
	if got := policyapi.NewSelector(policyapi.Requirement{Source: "k8s", Key: "x", Operator: policyapi.OpNotIn, Values: []string{"a"}},
		policyapi.Requirement{Source: "k8s", Key: "y", Operator: policyapi.OpExists}).String(); got != "k8s:x notin (a),k8s:y" {
		t.Errorf("String = %q", got)
	}
}

func TestSelectorMatchesAll(t *testing.T) {
	sel := policyapi.SelectLabels(labels.New("k8s", "app", "web"), labels.New("k8s", labels.KeyPodNamespace, "shop"))
	for _, tc := range []struct {
		name string
		give labels.Labels
		want bool
	}{
		{"every label", pod(t, "c1", "shop", "app=web", "tier=1"), true},
		{"one missing", pod(t, "c1", "other", "app=web"), false},
		{"none", reserved(identity.ReservedWorld), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sel.Matches(tc.give); got != tc.want {
				t.Errorf("%s Matches(%s) = %v, want %v", sel, tc.give, got, tc.want)
			}
		})
	}
	var wildcard policyapi.EndpointSelector
	for _, ls := range []labels.Labels{reserved(identity.ReservedWorld), cidr("10.0.0.0/8"), pod(t, "c2", "x"), nil} {
		if !wildcard.IsWildcard() || !wildcard.Matches(ls) {
			t.Errorf("the empty selector does not match %s", ls)
		}
	}
}
