package policycell

import (
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// TestMatchStored: which rules of a re-parsed import are restored, from
// what the file says was in force.
func TestMatchStored(t *testing.T) {
	const doc = `apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata: {name: two}
specs:
- endpointSelector: {matchLabels: {app: a}}
  ingress: [{fromEntities: [cluster]}]
- endpointSelector: {matchLabels: {app: b}}
  ingress: [{fromEntities: [cluster]}]
`
	pols, err := policyapi.ParseDocuments("test", []byte(doc), policyapi.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	origin := labelStrings(pols[0].Labels.With(apiSourceLabel))
	tests := []struct {
		name      string
		give      apiPolicy
		wantRules int
		wantErr   string
	}{
		{name: "all in force", give: apiPolicy{Origin: origin, Rules: 2, Kept: []int{0, 1}}, wantRules: 2},
		{name: "all in force, the parser now makes more", give: apiPolicy{Origin: origin, Rules: 1, Kept: []int{0}}, wantRules: 2},
		{name: "one in force", give: apiPolicy{Origin: origin, Rules: 2, Kept: []int{1}}, wantRules: 1},
		{name: "one in force, the parser now makes fewer", give: apiPolicy{Origin: origin, Rules: 3, Kept: []int{1}},
			wantErr: "it now has 2 rules, not 3, and only some were in force"},
		{name: "policy gone from the document", give: apiPolicy{Origin: []string{"k8s:io.cilium.k8s.policy.name=other"}, Rules: 1, Kept: []int{0}},
			wantErr: "policy k8s:io.cilium.k8s.policy.name=other not restored: the document no longer yields it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pols, err := policyapi.ParseDocuments("test", []byte(doc), policyapi.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			imp, rules, problems := matchStored(1, apiImport{Document: doc, Policies: []apiPolicy{tt.give}}, pols)
			if len(rules) != tt.wantRules {
				t.Errorf("rules = %d, want %d", len(rules), tt.wantRules)
			}
			for _, r := range rules {
				if !r.Labels.Has(apiSourceLabel) {
					t.Errorf("restored rule without %s: %v", apiSourceLabel, r.Labels)
				}
			}
			switch {
			case tt.wantErr == "" && (len(problems) > 0 || imp == nil):
				t.Errorf("problems = %q, import = %v; want it restored", problems, imp)
			case tt.wantErr != "" && (len(problems) != 1 || !strings.Contains(problems[0], tt.wantErr) || imp != nil):
				t.Errorf("problems = %q, import = %v; want one saying %q", problems, imp, tt.wantErr)
			}
		})
	}
}

// TestDecodeAPIState: what makes the file corrupt.
func TestDecodeAPIState(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		wantErr string
	}{
		{name: "ok", give: `{"version": 1, "imports": [{"document": "x", "policies": [{"origin": ["a"], "rules": 2, "kept": [1]}]}]}`},
		{name: "truncated", give: `{"version": 1, "imports": [`, wantErr: "decode: unexpected EOF"},
		{name: "other version", give: `{"version": 2, "imports": []}`, wantErr: "version: 2, want 1"},
		{name: "unknown field", give: `{"version": 1, "imports": [], "extra": 1}`, wantErr: `unknown field "extra"`},
		{name: "two objects", give: `{"version": 1, "imports": []} {}`, wantErr: "data after the object"},
		{name: "kept out of range", give: `{"version": 1, "imports": [{"document": "x", "policies": [{"origin": ["a"], "rules": 2, "kept": [2]}]}]}`,
			wantErr: "imports[0].policies[0].kept: 2 is not a rule index (rules: 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeAPIState([]byte(tt.give))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("decodeAPIState = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("decodeAPIState = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
