package simulate_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/simulate"
)

var update = flag.Bool("update", false, "rewrite the scenarios' golden files")

// scenarioFiles returns the scenario files under policy/testdata.
func scenarioFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../testdata/scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	return files
}

// TestScenarios runs every scenario with explanations and compares the
// output with its golden file (<scenario>.golden; go test -update
// rewrites them).
func TestScenarios(t *testing.T) {
	for _, file := range scenarioFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sim, err := simulate.Load(filepath.Base(file), data)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			var got bytes.Buffer
			results := sim.RunExplain()
			if err := simulate.WriteText(&got, results); err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				for _, d := range []*simulate.Decision{r.Egress, r.Ingress} {
					if strings.HasPrefix(d.Reason, "engine says") {
						t.Errorf("%s: explanation disagrees with the engine: %s", r, d.Reason)
					}
				}
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (go test -update writes it): %v", err)
			}
			if got.String() != string(want) {
				t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", golden, got.String(), want)
			}
		})
	}
}

// TestExplainAgreesWithEngine asks every scenario about every pair of its
// endpoints and addresses on a spread of ports and protocols, and checks
// that the rule evaluation behind --explain reaches the engine's verdict
// in every direction.
func TestExplainAgreesWithEngine(t *testing.T) {
	ports := []int{22, 53, 80, 443, 5432, 6379, 7999, 8000, 8050, 8080, 8100, 8101, 9090}
	for _, file := range scenarioFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := simulate.ParseScenario(file, data)
			if err != nil {
				t.Fatal(err)
			}
			refs := []string{"192.0.2.77", "2001:db8::77", "203.0.113.5"}
			for _, ep := range s.Endpoints {
				cluster := ep.Cluster
				if cluster == "" {
					cluster = s.Cluster
				}
				refs = append(refs, cluster+"/"+ep.Namespace+"/"+ep.Name)
				refs = append(refs, ep.IPs...)
			}
			s.Queries = nil
			for _, from := range refs {
				for _, to := range refs {
					for _, port := range ports {
						for _, proto := range []string{"TCP", "UDP"} {
							s.Queries = append(s.Queries, simulate.Query{From: from, To: to, Port: port, Protocol: proto})
						}
					}
				}
			}
			sim, err := simulate.New(file, s)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range sim.RunExplain() {
				for _, d := range []*simulate.Decision{r.Egress, r.Ingress} {
					if strings.HasPrefix(d.Reason, "engine says") {
						t.Errorf("%s: %s", r, d.Reason)
					}
				}
			}
		})
	}
}
