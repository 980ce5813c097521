package api_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy/api"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

func TestRequirementMatches(t *testing.T) {
	web := labels.MustParseList("k8s:app=web", "container:team=a")
	for _, tc := range []struct {
		name string
		give api.Requirement
		ls   labels.Labels
		want bool
	}{
		{"any source matches k8s", api.Requirement{Source: "any", Key: "app", Operator: api.OpIn, Values: []string{"web"}}, web, true},
		{"same source", api.Requirement{Source: "k8s", Key: "app", Operator: api.OpIn, Values: []string{"db", "web"}}, web, true},
		{"other source", api.Requirement{Source: "k8s", Key: "team", Operator: api.OpIn, Values: []string{"a"}}, web, false},
		{"other value", api.Requirement{Source: "any", Key: "app", Operator: api.OpIn, Values: []string{"db"}}, web, false},
		{"notin absent key", api.Requirement{Source: "k8s", Key: "tier", Operator: api.OpNotIn, Values: []string{"x"}}, web, true},
		{"notin other source counts as absent", api.Requirement{Source: "k8s", Key: "team", Operator: api.OpNotIn, Values: []string{"a"}}, web, true},
		{"notin listed value", api.Requirement{Source: "any", Key: "app", Operator: api.OpNotIn, Values: []string{"web"}}, web, false},
		{"exists", api.Requirement{Source: "any", Key: "team", Operator: api.OpExists}, web, true},
		{"exists wrong source", api.Requirement{Source: "k8s", Key: "team", Operator: api.OpExists}, web, false},
		{"does not exist", api.Requirement{Source: "any", Key: "tier", Operator: api.OpDoesNotExist}, web, true},
		{"does not exist present", api.Requirement{Source: "any", Key: "app", Operator: api.OpDoesNotExist}, web, false},
		{"reserved label", api.Requirement{Source: "reserved", Key: "host", Operator: api.OpIn, Values: []string{""}}, identity.ReservedLabels(identity.ReservedHost), true},
		{"unknown operator", api.Requirement{Source: "any", Key: "app", Operator: "Like", Values: []string{"web"}}, web, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.give.Matches(tc.ls); got != tc.want {
				t.Errorf("%s Matches(%s) = %v, want %v", tc.give, tc.ls, got, tc.want)
			}
		})
	}
}

func TestSelectorIsCanonical(t *testing.T) {
	a := api.NewSelector(
		api.Requirement{Source: "k8s", Key: "tier", Operator: api.OpIn, Values: []string{"b", "a", "b"}},
		api.Requirement{Source: "any", Key: "app", Operator: api.OpIn, Values: []string{"web"}},
		api.Requirement{Source: "k8s", Key: "old", Operator: api.OpDoesNotExist},
		api.Requirement{Source: "any", Key: "app", Operator: api.OpIn, Values: []string{"web"}},
	)
	b := api.NewSelector(
		api.Requirement{Source: "k8s", Key: "old", Operator: api.OpDoesNotExist},
		api.Requirement{Source: "k8s", Key: "tier", Operator: api.OpIn, Values: []string{"a", "b"}},
		api.Requirement{Source: "any", Key: "app", Operator: api.OpIn, Values: []string{"web"}},
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
	if got := api.NewSelector(api.Requirement{Source: "k8s", Key: "x", Operator: api.OpNotIn, Values: []string{"a"}},
		api.Requirement{Source: "k8s", Key: "y", Operator: api.OpExists}).String(); got != "k8s:x notin (a),k8s:y" {
		t.Errorf("String = %q", got)
	}
}

func TestSelectorMatchesAll(t *testing.T) {
	sel := api.SelectLabels(labels.New("k8s", "app", "web"), labels.New("k8s", labels.KeyPodNamespace, "shop"))
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
	var wildcard api.EndpointSelector
	for _, ls := range []labels.Labels{reserved(identity.ReservedWorld), cidr("10.0.0.0/8"), pod(t, "c2", "x"), nil} {
		if !wildcard.IsWildcard() || !wildcard.Matches(ls) {
			t.Errorf("the empty selector does not match %s", ls)
		}
	}
}
