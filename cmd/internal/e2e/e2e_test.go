package e2e_test

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
)

func TestAgentAndCLI(t *testing.T) {
	agentBin, cliBin := buildBinaries(t)
	dir := t.TempDir()
	socket := filepath.Join(dir, "run", "apiary.sock")
	stateDir := filepath.Join(dir, "state")
	notRunning := "cannot reach apiary-agent at " + socket + ": is it running? (dial unix " + socket +
		": connect: no such file or directory)\n"

	t.Run("status without an agent", func(t *testing.T) {
		code, out, errOut := runCLI(t, cliBin, socket, "status")
		if code != 1 || out != "" || errOut != notRunning {
			t.Errorf("apiary status = %d, stdout %q, stderr %q; want 1, nothing and %q", code, out, errOut, notRunning)
		}
	})

	agent := startAgent(t, agentBin, "--socket-path="+socket, "--state-dir="+stateDir,
		"--prometheus-serve-addr=127.0.0.1:0")
	agent.waitStarted(t)

	t.Run("status", func(t *testing.T) {
		code, out, errOut := runCLI(t, cliBin, socket, "status")
		if code != 0 {
			t.Fatalf("apiary status = %d: %s", code, errOut)
		}
		for _, re := range []string{
			`(?m)^Agent: +Ok +` + regexp.QuoteMeta(e2eVersion) + ` \(go.*\), up \d+s$`,
			`(?m)^State dir: +Ok +` + regexp.QuoteMeta(stateDir) + ` \(mode 0750, .* free\)$`,
			`(?m)^Metrics: +Ok +serving /metrics on 127\.0\.0\.1:\d+$`,
			`(?m)^Controllers: +Ok +0/0 healthy$`,
			`(?m)^Hive: +Ok +\d+ modules, 0 degraded$`,
			`(?m)^IPCache: +Ok +\d+ entr(y|ies), revision \d+$`,
			`(?m)^Nodes: +Ok +1 node \(1 local, 0 remote\)$`,
			`(?m)^Endpoints: +Ok +0 endpoints$`,
			`(?m)^Overall: +Ok$`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("apiary status output has no match for %s:\n%s", re, out)
			}
		}
	})

	var st models.Status
	t.Run("status -o json", func(t *testing.T) {
		code, out, errOut := runCLI(t, cliBin, socket, "status", "-o", "json")
		if code != 0 {
			t.Fatalf("apiary status -o json = %d: %s", code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		var names []string
		for _, e := range st.Entries {
			names = append(names, e.Name)
		}
		if st.State != models.StateOk || strings.Join(names, ",") != "Agent,State dir,Metrics,API,Controllers,Hive,Kubernetes,Kubernetes APIs,KVStore,Identities,Policy,IPCache,Nodes,Routing,KubeProxyReplacement,IPCache map,Endpoints,IPAM,Services,Hubble,ClusterMesh" {
			t.Errorf("status = %s %v, want Ok with the infrastructure and control plane lines", st.State, names)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		if len(st.Entries) < 3 {
			t.Skip("no status document")
		}
		addr := strings.TrimPrefix(st.Entries[2].Message, "serving /metrics on ")
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if !regexp.MustCompile(`(?m)^apiary_agent_bootstrap_seconds\{phase="overall"\} `).Match(body) {
			t.Errorf("/metrics has no overall bootstrap time:\n%.2000s", body)
		}
	})

	t.Run("hive", func(t *testing.T) {
		code, out, errOut := runCLI(t, cliBin, socket, "hive")
		if code != 0 {
			t.Fatalf("apiary hive = %d: %s", code, errOut)
		}
		for _, re := range []string{
			`^Hive: OK\n`,
			`(?m)^api-server +OK +\d+s ago +REST API on a unix socket: listening on ` + regexp.QuoteMeta(socket) + `$`,
			`(?m)^metrics +OK +\d+s ago +Prometheus metrics registry and /metrics endpoint: serving /metrics on 127\.0\.0\.1:\d+$`,
			`(?m)^  job-probe-status +OK +\d+s ago +last run succeeded$`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("apiary hive output has no match for %s:\n%s", re, out)
			}
		}
	})

	t.Run("version", func(t *testing.T) {
		code, out, _ := runCLI(t, cliBin, socket, "version")
		re := regexp.MustCompile(`^Client: ` + regexp.QuoteMeta(e2eVersion) + ` \(.*\)\nAgent:  ` + regexp.QuoteMeta(e2eVersion) + ` \(.*\)\n$`)
		if code != 0 || !re.MatchString(out) {
			t.Errorf("apiary version = %d %q", code, out)
		}
	})

	t.Run("second agent refuses the live socket", func(t *testing.T) {
		second := startAgent(t, agentBin, "--socket-path="+socket, "--state-dir="+stateDir)
		if code := second.wait(t); code != 1 {
			t.Errorf("second agent exited %d, want 1", code)
		}
		log := second.Log()
		lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "apiary-agent: ") || !strings.Contains(last, "listen on socket "+socket+": socket is in use") {
			t.Errorf("second agent's last line = %q, want the socket-in-use error\n%s", last, log)
		}
	})

	agent.terminate(t)
	if code := agent.wait(t); code != 0 {
		t.Fatalf("apiary-agent exited %d after SIGTERM:\n%s", code, agent.Log())
	}
	log := agent.Log()
	if !regexp.MustCompile(`(?s)msg=Stopping reason="terminated signal received".*msg=Stopped`).MatchString(log) {
		t.Errorf("log does not show an orderly stop:\n%s", log)
	}
	if _, err := os.Lstat(socket); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket %s still there after stop (%v)", socket, err)
	}
	if info, err := os.Stat(stateDir); err != nil || info.Mode().Perm() != 0o750 {
		t.Errorf("state dir after stop: %v %v, want kept with 0750", info, err)
	}
	t.Run("status after stop", func(t *testing.T) {
		code, out, errOut := runCLI(t, cliBin, socket, "status", "--brief")
		if code != 1 || out != "" || errOut != notRunning {
			t.Errorf("apiary status --brief = %d, stdout %q, stderr %q; want 1 and %q", code, out, errOut, notRunning)
		}
	})
}
