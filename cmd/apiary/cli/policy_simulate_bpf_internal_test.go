package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// TestPolicySimulateBPF runs every scenario with --datapath=bpf: the text
// output is the engine's, line for line, and the JSON output explains
// each direction with what the programs did.
func TestPolicySimulateBPF(t *testing.T) {
	bpfmaptest.RequireBPF(t)
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			engine, err := runSimulate(t, "-f", file)
			if err != nil {
				t.Fatal(err)
			}
			kernel, err := runSimulate(t, "-f", file, "--datapath=bpf")
			if err != nil {
				t.Fatal(err)
			}
			if kernel != engine {
				t.Errorf("--datapath=bpf:\n%s\nengine:\n%s", kernel, engine)
			}
			out, err := runSimulate(t, "-f", file, "--datapath", "bpf", "-o", "json", "--explain")
			if err != nil {
				t.Fatal(err)
			}
			var results []struct {
				Verdict         string
				Egress, Ingress *struct{ Verdict, Reason string }
			}
			if err := json.Unmarshal([]byte(out), &results); err != nil {
				t.Fatalf("decode %s: %v", out, err)
			}
			if len(results) != strings.Count(engine, "\n") {
				t.Fatalf("%d JSON results for %d lines", len(results), strings.Count(engine, "\n"))
			}
			programs := 0
			for _, r := range results {
				for _, d := range []*struct{ Verdict, Reason string }{r.Egress, r.Ingress} {
					if d == nil || d.Reason == "" {
						t.Fatalf("a direction lacks an explanation: %s", out)
					}
					if strings.Contains(d.Reason, "_container") {
						programs++
					}
				}
			}
			if programs == 0 {
				t.Errorf("no verdict came from a program: %s", out)
			}
		})
	}
}

func TestPolicySimulateDatapathFlag(t *testing.T) {
	_, err := runSimulate(t, "-f", filepath.Join(scenarioDir, "self-traffic.yaml"), "--datapath=xdp")
	if err == nil || !strings.Contains(err.Error(), `"xdp" is not engine or bpf`) {
		t.Errorf("error %v, want it to name the bad value", err)
	}
}
