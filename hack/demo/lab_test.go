package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/simulate"
)

const scenarios = "../../policy/testdata/scenarios/"

// runDemo runs the lab in-process and returns its exit status and output.
func runDemo(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	t.Logf("demo %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// wantNothingLeft fails when the lab left a namespace, a pin directory or
// its directory behind.
func wantNothingLeft(t *testing.T) {
	t.Helper()
	if left := labNetNS(); len(left) > 0 {
		t.Errorf("network namespaces left: %v", left)
	}
	for _, d := range []string{labDir, bpfDir} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s left", d)
		}
	}
}

// TestScenarios builds the lab of the seed scenario (with the global
// service walk-through and a restart round) and of six others, each covering one kind of rule (IPv6 and
// ICMP among them); every verdict from real packets must equal
// simulate's.
func TestScenarios(t *testing.T) {
	binDir := buildBinaries(t)
	tests := []struct {
		name  string
		file  string
		flags []string
		want  []string
	}{
		{
			name: "seed", file: "clustermesh-l4.yaml", flags: []string{"--restart-round"},
			want: []string{
				"default/employee-0 -> 10.3.3.3 6379/TCP ALLOWED\n  seen: PONG (10.3.3.10 -> 10.3.3.3:6379",
				"default/stranger-0 -> 10.3.3.3 6379/TCP DENIED\n  seen: timeout (10.3.3.11 -> 10.3.3.3:6379",
				"monitor of cluster1-node1: xx drop (Policy denied) ingress endpoint 1, identity ",
				"hubble observe on cluster1-node1: ", "default/stranger-0:", " Policy denied DROPPED (TCP Flags: SYN)",
				"cluster2/istio-space/employee-0 -> 10.3.3.3 6379/TCP ALLOWED\n  seen: PONG (10.4.4.10 -> 10.3.3.3:6379",
				"ClusterMesh:   Ok         1/1 clusters ready",
				"cluster2/cluster2-node1   192.168.254.21   10.4.4.0/24",
				"agent down: open connection ",
				"agent back: open connection ",
				"agent back: new connection default/employee-0 -> 10.3.3.3 6379/TCP ALLOWED: PONG",
				// The global service walk-through.
				"ClusterMesh: Ok 1/1 clusters ready, 1 global-services",
				"10.96.100.10:80/TCP ClusterIP",
				"(active, cluster2)",
				`an answer: {"Galaxy": "Alderaan", "Cluster": "cluster`,
				"want both clusters: ok",
				"2. affinity local: cluster1's Service annotated service.cilium.io/affinity: local",
				"want cluster1 only: ok\n3. failover: cluster1's rebel-base pods deleted",
				"want cluster2 only: ok\n4. back: new rebel-base pods in cluster1",
				"want cluster1 only: ok\nGlobal services walk-through done in ",
				"All 12 verdicts agree",
			},
		},
		{name: "deny and CIDR rules", file: "deny-beats-allow.yaml", want: []string{"All 6 verdicts agree"}},
		{name: "named ports", file: "named-ports-cnp-identities.yaml", want: []string{"All 9 verdicts agree"}},
		{name: "cross-cluster selectors, three clusters", file: "clustermesh-cross-cluster.yaml", flags: []string{"--global-services=false"},
			want: []string{"All 3 verdicts agree"}},
		{name: "netpol default deny, relocated addresses", file: "netpol-default-deny-same-namespace.yaml", want: []string{
			"note: x/a: 10.0.0.1 is the network, router or broadcast address", "All 7 verdicts agree",
		}},
		{name: "IPv6 ipBlock, dual-stack", file: "netpol-ipblock-except.yaml", want: []string{
			"note: db/server: fd00::1 is the network, router or broadcast address",
			"2001:db8::7 -> fd00::1 443/TCP ALLOWED\n  seen: PONG (2001:db8::7 -> [fd5e:1ab:a:1::2]:443",
			"2001:db9::7 -> db/server 443/TCP DENIED\n  seen: timeout (2001:db9::7 -> [fd5e:1ab:a:1::2]:443",
			"xx drop (Policy denied) ingress endpoint 1, identity 10->",
			"All 9 verdicts agree",
		}},
		{name: "ICMP and ICMPv6", file: "icmp.yaml", want: []string{
			"x/client -> x/web 128/ICMPv6 ALLOWED\n  seen: reply (fd5e:1ab:a::2 -> fd00::3 ICMPv6 type 128",
			"x/admin -> x/web 129/ICMPv6 ALLOWED\n  seen: received (fd00::2 -> fd00::3 ICMPv6 type 129",
			"x/admin -> x/web 13/ICMP DENIED\n  seen: timeout (10.0.0.2 -> 10.0.0.3 ICMP type 13",
			"xx drop (Policy denied by denylist) ingress endpoint 2, identity ",
			"x/db -> x/web 135/ICMPv6 ALLOWED\n  seen: received (fd00::4 -> fd00::3 ICMPv6 type 135",
			"All 17 verdicts agree",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--bin-dir", binDir, "--keep=false"}, tt.flags...)
			code, out, _ := runDemo(t, append(args, scenarios+tt.file)...)
			if code != 0 {
				t.Errorf("exit status %d, want 0", code)
			}
			// Columns of status lines widen with the longest label:
			// compare with runs of spaces folded.
			flat := strings.Join(strings.Fields(out), " ")
			for _, w := range tt.want {
				if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("output lacks %q", w)
				}
			}
			if strings.Contains(out, "\n  note: create pod ") {
				t.Errorf("a pod of the global service walk-through was created only on a retry")
			}
			wantVerdicts(t, scenarios+tt.file, out)
			wantNothingLeft(t)
		})
	}
}

// wantVerdicts checks that the output has simulate's line of every
// query, in order.
func wantVerdicts(t *testing.T, file, out string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := simulate.Load(file, data)
	if err != nil {
		t.Fatal(err)
	}
	rest := out
	for _, r := range sim.Run() {
		i := strings.Index(rest, r.String()+"\n")
		if i < 0 {
			t.Errorf("output lacks simulate's %q (in order)", r.String())
			continue
		}
		rest = rest[i+len(r.String()):]
	}
}

// TestDifferenceExitsNonZero: a verdict of the packets that differs from
// the expected one is listed and the exit status is exitDiffers. The
// lab runs a real scenario whose expected verdict of one query is
// flipped, as a datapath bug would show.
func TestDifferenceExitsNonZero(t *testing.T) {
	binDir := buildBinaries(t)
	file := scenarios + "cilium-star-wars.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlan(file, data)
	if err != nil {
		t.Fatal(err)
	}
	q := p.queries[1] // default/xwing -> default/deathstar 80/TCP DENIED
	if q.result.Verdict != simulate.Denied {
		t.Fatalf("queries[1] is %s, want a denied query", q.result.String())
	}
	q.result.Verdict = simulate.Allowed
	bins, err := findBinaries(options{binDir: binDir})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code, err := runPlan(t.Context(), p, bins, options{}, &out)
	t.Logf("exit %d, %v\n%s", code, err, out.String())
	want := "1 of 3 verdicts differ from apiary policy simulate:\n  default/xwing -> default/deathstar 80/TCP DENIED: simulate says ALLOWED\n"
	if code != exitDiffers || err != nil || !strings.Contains(out.String(), want) {
		t.Errorf("exit %d, error %v; want %d and the output to say %q", code, err, exitDiffers, want)
	}
	wantNothingLeft(t)
}

// TestScenarioErrorCreatesNothing: a scenario simulate refuses is refused
// with simulate's message before anything is created, and so is one the
// lab cannot build (an SCTP query, an outside address of the other
// family than the query's packets).
func TestScenarioErrorCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	data := []byte("cluster: c1\nendpoints:\n  - {name: a, namespace: x, ips: [10.0.0.300]}\nqueries:\n  - {from: x/a, to: x/b, port: 80}\n")
	if err := os.WriteFile(bad, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, simErr := simulate.Load(bad, data)
	if simErr == nil {
		t.Fatal("simulate accepts the bad scenario")
	}
	code, out, errOut := runDemo(t, "--bin-dir", "/nonexistent", bad)
	if code != 1 || strings.TrimSpace(errOut) != oneLine(simErr) || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and simulate's %q", code, out, errOut, oneLine(simErr))
	}
	refused := filepath.Join(dir, "refused.yaml")
	data = []byte(`cluster: c1
endpoints:
  - {name: a, namespace: x, ips: [10.0.0.2]}
queries:
  - {from: x/a, to: 192.0.2.1, port: 9, protocol: SCTP}
  - {from: "2001:db8::1", to: 192.0.2.1, port: 80}
`)
	if err := os.WriteFile(refused, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runDemo(t, "--bin-dir", "/nonexistent", refused)
	want := refused + ": queries[0] (x/a -> 192.0.2.1): protocol SCTP: the lab runs TCP, UDP, ICMP and ICMPv6 queries only; " +
		refused + ": queries[1] (2001:db8::1 -> 192.0.2.1): 2001:db8::1 is an IPv6 address of no endpoint, the query's packets are IPv4: the lab cannot send them"
	if code != 1 || strings.TrimSpace(errOut) != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut, want)
	}
	wantNothingLeft(t)
}

// TestStartFailures: an etcd or an agent that does not start is named,
// with its log, and the lab is removed.
func TestStartFailures(t *testing.T) {
	binDir := buildBinaries(t)
	dir := t.TempDir()
	failing := filepath.Join(dir, "fails")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'cannot start: no such flag' >&2\nexit 2\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	badBin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(badBin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(failing, filepath.Join(badBin, "apiary-agent")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(binDir, "apiary"), filepath.Join(badBin, "apiary")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want *regexp.Regexp
	}{
		{"etcd", []string{"--bin-dir", binDir, "--etcd", failing},
			regexp.MustCompile(`etcd of cluster cluster1 failed to start: etcd of cluster1 exited \(exit status 2\); the end of /run/apiary-lab/etcd-cluster1/etcd.log:\n  cannot start: no such flag`)},
		{"agent", []string{"--bin-dir", badBin},
			regexp.MustCompile(`apiary-agent of node cluster1-node1 failed to start: apiary-agent of cluster1-node1 exited \(exit status 2\); the end of /run/apiary-lab/cluster1-node1/agent.log:\n  cannot start: no such flag`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runDemo(t, append(tt.args, scenarios+"clustermesh-l4.yaml")...)
			if code != 1 || !tt.want.MatchString(errOut) {
				t.Errorf("exit %d, stderr %q; want 1 and %s", code, errOut, tt.want)
			}
			wantNothingLeft(t)
		})
	}
}
