package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// aliasBomb is a document of one anchored string of size bytes and refs
// aliases to it: small, and a gigabyte once expanded.
func aliasBomb(size, refs int) []byte {
	return []byte(`a: &a "` + strings.Repeat("x", size) + "\"\nb:\n" + strings.Repeat("- *a\n", refs))
}

// peakRSS returns the high-water mark of a process's resident memory
// (VmHWM), in KiB.
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB$`).FindSubmatch(status)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	kib, _ := strconv.Atoi(string(m[1]))
	return kib
}

// TestHostileInput runs hostile input against the binaries: with an alias
// bomb, a named pipe and a symlink to /dev/zero in --policy-dir the agent
// crashed at every start or never started; `apiary policy import` of an
// alias bomb grew it to 5 GB and killed it; a named pipe as the etcd
// config file kept it from starting.
func TestHostileInput(t *testing.T) {
	agentBin, cliBin := buildBinaries(t)
	dir := t.TempDir()
	socket := filepath.Join(dir, "apiary.sock")
	policyDir := filepath.Join(dir, "policies")
	must(t, os.Mkdir(policyDir, 0o755))
	must(t, os.WriteFile(filepath.Join(policyDir, "good.yaml"), []byte(goodPolicy), 0o644))
	must(t, os.WriteFile(filepath.Join(policyDir, "bomb.yaml"), aliasBomb(4<<20, 999), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(policyDir, "fifo.yaml"), 0o644))
	must(t, os.Symlink("/dev/zero", filepath.Join(policyDir, "zero.yaml")))
	bomb := filepath.Join(dir, "bomb.yaml")
	must(t, os.WriteFile(bomb, aliasBomb(1<<20, 999), 0o644))

	agent := startAgent(t, agentBin, "--socket-path="+socket, "--state-dir="+filepath.Join(dir, "state"),
		"--policy-dir="+policyDir)
	agent.waitStarted(t)

	t.Run("status names the bad files", func(t *testing.T) {
		code, out, errOut := runCLI(t, cliBin, socket, "status", "--verbose")
		re := `(?m)^Policy: +Warning +1 rules, revision \d+, 4 files, rejected: bomb\.yaml, skipped: fifo\.yaml, zero\.yaml$`
		if code != 1 && code != 0 || !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("apiary status = %d, %s\n%s\nwant a match for %s", code, errOut, out, re)
		}
	})
	t.Run("import of an alias bomb", func(t *testing.T) {
		code, out, errOut := runCLI(t, cliBin, socket, "policy", "import", bomb)
		want := "413 Request Entity Too Large: request: document 1: too large: decodes to more than the limit of 8388608 bytes (8 MiB) set by --policy-max-document-size"
		if code != 1 || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("apiary policy import = %d, %q, %q; want 1 and one line with %q", code, out, errOut, want)
		}
		if code, _, errOut := runCLI(t, cliBin, socket, "status", "--brief"); code > 1 {
			t.Errorf("apiary status after the bomb = %d: %s", code, errOut)
		}
		// The Go runtime, the control plane, the 4 and 1 MiB inputs and
		// their YAML trees: tens of MiB. The bombs expanded were
		// gigabytes.
		kib := peakRSS(t, agent.cmd.Process.Pid)
		t.Logf("agent peak RSS: %d MiB", kib>>10)
		if kib > 512<<10 {
			t.Errorf("agent peak RSS %d MiB, want under 512", kib>>10)
		}
	})

	agent.terminate(t)
	if code := agent.wait(t); code != 0 {
		t.Errorf("apiary-agent exited %d after SIGTERM:\n%s", code, agent.Log())
	}

	t.Run("named pipe as the etcd config file", func(t *testing.T) {
		fifo := filepath.Join(dir, "etcd.yaml")
		must(t, syscall.Mkfifo(fifo, 0o600))
		second := startAgent(t, agentBin, "--socket-path="+socket, "--state-dir="+filepath.Join(dir, "state"),
			"--kvstore=etcd", "--kvstore-opt=etcd.config="+fifo)
		if code := second.wait(t); code != 1 {
			t.Errorf("agent exited %d, want 1", code)
		}
		if want := "--kvstore-opt: read etcd config: read " + fifo + ": not a regular file (named pipe)"; !strings.Contains(second.Log(), want) {
			t.Errorf("agent log does not say %q:\n%s", want, second.Log())
		}
	})
}

const goodPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: good}
spec:
  endpointSelector: {matchLabels: {app: web}}
  ingress: [{fromEndpoints: [{matchLabels: {app: client}}]}]
`

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
