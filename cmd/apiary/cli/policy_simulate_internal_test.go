package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runSimulate runs `policy simulate` with args and returns its output and
// error; warnings (stderr) are left out.
func runSimulate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newPolicySimulateCommand()
	var out, warnings bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&warnings)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

const scenarioDir = "../../../policy/testdata/scenarios"

// TestPolicySimulateSeed checks the seed's ClusterMesh walk-through
// verdict by verdict: its three pings as it narrates them (cluster1's
// employee and cluster2's istio-space employee get through, the stranger
// does not), then the queries around them. With
// --policy-default-local-cluster=false the peer selector that names no
// cluster selects employees of every cluster's default namespace, so
// cluster2's default-namespace employee gets through too.
func TestPolicySimulateSeed(t *testing.T) {
	want := []string{
		"default/employee-0 -> 10.3.3.3 6379/TCP ALLOWED",
		"default/stranger-0 -> 10.3.3.3 6379/TCP DENIED",
		"cluster2/istio-space/employee-0 -> 10.3.3.3 6379/TCP ALLOWED",
		"default/employee-0 -> default/protected-db-0 6380/TCP DENIED",
		"default/employee-0 -> default/protected-db-0 6379/UDP DENIED",
		"cluster2/default/employee-0 -> cluster1/default/protected-db-0 6379/TCP DENIED",
		"istio-space/employee-0 -> default/protected-db-0 6379/TCP DENIED",
		"cluster2/istio-space/stranger-0 -> default/protected-db-0 6379/TCP DENIED",
		"10.4.4.10 -> 10.3.3.3 6379/TCP ALLOWED",
		"192.0.2.1 -> default/protected-db-0 6379/TCP DENIED",
		"default/protected-db-0 -> default/stranger-0 8080/TCP ALLOWED",
		"default/stranger-0 -> default/employee-0 6379/TCP ALLOWED",
	}
	meshWide := slices.Clone(want)
	meshWide[5] = "cluster2/default/employee-0 -> cluster1/default/protected-db-0 6379/TCP ALLOWED"
	file := filepath.Join(scenarioDir, "clustermesh-l4.yaml")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-f", file}, want},
		{[]string{"-f", file, "--policy-default-local-cluster=true"}, want},
		{[]string{"-f", file, "--policy-default-local-cluster=false"}, meshWide},
	} {
		out, err := runSimulate(t, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSuffix(out, "\n"); got != strings.Join(tc.want, "\n") {
			t.Errorf("%v: got:\n%s\nwant:\n%s", tc.args, got, strings.Join(tc.want, "\n"))
		}
	}
}

// TestPolicySimulateScenarios checks every scenario's text output against
// the verdict lines of its golden file, and its JSON output against the
// text.
func TestPolicySimulateScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil || len(files) < 8 {
		t.Fatalf("scenarios: %v, %d files", err, len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			golden, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(strings.TrimSuffix(string(golden), "\n"), "\n") {
				if !strings.HasPrefix(line, " ") {
					want = append(want, line)
				}
			}
			out, err := runSimulate(t, "-f", file)
			if err != nil {
				t.Fatal(err)
			}
			if out != strings.Join(want, "\n")+"\n" {
				t.Errorf("text output:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
			}
			checkJSON(t, file, want)
		})
	}
}

// checkJSON runs the scenario with -o json --explain and checks each
// entry against the text line and that both directions are explained.
func checkJSON(t *testing.T, file string, want []string) {
	t.Helper()
	out, err := runSimulate(t, "-f", file, "-o", "json", "--explain")
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		From, To, Protocol, Verdict string
		Port                        int
		ICMPType                    *int `json:"icmp-type"`
		Egress, Ingress             *struct{ Verdict, Reason string }
	}
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for i, r := range results {
		line := r.From + " -> " + r.To + " " + strconv.Itoa(r.Port) + "/" + r.Protocol + " " + strings.ToUpper(r.Verdict)
		if line != want[i] {
			t.Errorf("json result %d is %q, want %q", i, line, want[i])
		}
		if isICMP := strings.HasPrefix(r.Protocol, "ICMP"); isICMP != (r.ICMPType != nil) || isICMP && *r.ICMPType != r.Port {
			t.Errorf("json result %d: icmp-type %v with protocol %s and port %d, want the port for ICMP only", i, r.ICMPType, r.Protocol, r.Port)
		}
		if r.Egress == nil || r.Ingress == nil || r.Egress.Reason == "" || r.Ingress.Reason == "" {
			t.Errorf("json result %d lacks an explanation: %s", i, out)
		}
	}
}

// TestPolicySimulateErrors checks that bad input is one error naming the
// problem.
func TestPolicySimulateErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(bad, []byte("endpoints:\n- {name: b, namespace: x, ips: [192.0.2.300]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		give []string
		want string
	}{
		{"no file flag", nil, "--file is required"},
		{"missing file", []string{"-f", filepath.Join(dir, "nope.yaml")}, "read scenario"},
		{"bad output", []string{"-f", bad, "-o", "yaml"}, `--output: "yaml" is not text or json`},
		{"bad ip", []string{"-f", bad}, `scenario.yaml: endpoints[0] (x/b): ips[0]: "192.0.2.300" is not an IP address`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runSimulate(t, tt.give...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestPolicySimulateExitCodes runs `apiary policy simulate` as the binary
// does: exit 0 for a valid file whatever the verdicts, 1 with one error
// line otherwise, and no agent needed (the socket does not exist).
func TestPolicySimulateExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "scenario.yaml")
	give := "endpoints:\n- {name: b, namespace: x, ips: [192.0.2.300]}\n- {name: b, namespace: x}\nqueries: [{from: x/a, to: x/b, port: 80}]\n"
	if err := os.WriteFile(bad, []byte(give), 0o644); err != nil {
		t.Fatal(err)
	}
	noAgent := []string{"--socket", filepath.Join(dir, "none.sock"), "policy", "simulate"}
	for _, tt := range []struct {
		name       string
		give       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"valid with denials", []string{"-f", filepath.Join(scenarioDir, "clustermesh-l4.yaml")}, 0,
			"default/stranger-0 -> 10.3.3.3 6379/TCP DENIED\n", ""},
		{"valid with a warning", []string{"-f", filepath.Join(scenarioDir, "cilium-star-wars.yaml")}, 0,
			"default/xwing -> default/deathstar 80/TCP DENIED\n",
			"warning: " + filepath.Join(scenarioDir, "cilium-star-wars.yaml") + ": policies[0]: document 1 (CiliumNetworkPolicy default/rule1): " +
				"description: belongs in spec.description (Kubernetes drops it here); taken as the description of the policy's rules\n"},
		{"invalid", []string{"-f", bad}, 1, "",
			`scenario.yaml: endpoints[0] (x/b): ips[0]: "192.0.2.300" is not an IP address; ` +
				bad + `: endpoints[1] (x/b): duplicate endpoint: also endpoints[0]; ` +
				bad + `: queries[0] (x/a -> x/b): from: "x/a" is no endpoint of the scenario` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Execute(context.Background(), append(noAgent, tt.give...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q, want it to contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.HasSuffix(stderr.String(), tt.wantStderr) || strings.Count(stderr.String(), "\n") > 1 {
				t.Errorf("stderr %q, want one line ending in %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}
