package simulate_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/simulate"
)

// FuzzScenario feeds Load arbitrary scenario files, seeded with the
// scenarios in testdata (corpus in testdata/fuzz/FuzzScenario; explore
// with go test -fuzz=FuzzScenario ./policy/simulate/). For any input:
// no panic; an error is about the scenario or a policy document; a
// valid scenario answers every query, and the rule evaluation behind
// --explain agrees with the engine on every verdict.
func FuzzScenario(f *testing.F) {
	files, _ := filepath.Glob("../testdata/scenarios/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sim, err := simulate.Load("fuzz.yaml", data)
		if err != nil {
			var de *policyapi.DocumentError
			if !errors.Is(err, simulate.ErrInvalid) && !errors.As(err, &de) {
				t.Fatalf("error %v is neither about the scenario nor about a policy document", err)
			}
			if sim != nil {
				t.Fatalf("a simulation returned with error %v", err)
			}
			return
		}
		s, err := simulate.ParseScenario("fuzz.yaml", data)
		if err != nil {
			t.Fatalf("Load accepted what ParseScenario refuses: %v", err)
		}
		results := sim.RunExplain()
		if len(results) != len(s.Queries) {
			t.Fatalf("%d results for %d queries", len(results), len(s.Queries))
		}
		for _, r := range results {
			if r.Verdict != simulate.Allowed && r.Verdict != simulate.Denied {
				t.Fatalf("%s: verdict %q", r, r.Verdict)
			}
			for _, d := range []*simulate.Decision{r.Egress, r.Ingress} {
				if d == nil || strings.HasPrefix(d.Reason, "engine says") {
					t.Fatalf("%s: decision %+v", r, d)
				}
			}
			if (r.Verdict == simulate.Allowed) != (r.Egress.Verdict == simulate.Allowed && r.Ingress.Verdict == simulate.Allowed) {
				t.Fatalf("%s: verdict disagrees with its directions %+v %+v", r, r.Egress, r.Ingress)
			}
		}
	})
}
