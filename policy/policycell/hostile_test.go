package policycell_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
)

// aliasBomb is a small YAML document that expands to refs copies of a
// string of size bytes: one anchored string and a list of aliases to it.
// YAML libraries bound the number of alias nodes, not their bytes, so
// 1 MiB and 999 aliases pass their check and decode to a gigabyte of JSON.
func aliasBomb(size, refs int) []byte {
	var b strings.Builder
	b.WriteString(`a: &a "`)
	b.WriteString(strings.Repeat("x", size))
	b.WriteString("\"\nb:\n")
	for range refs {
		b.WriteString("- *a\n")
	}
	return []byte(b.String())
}

// allocatedDuring returns the bytes the process allocated while fn ran
// (runtime.MemStats.TotalAlloc, which counts every allocation, freed or
// not): the alias bomb allocated gigabytes before it was refused.
func allocatedDuring(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// maxBombAlloc is a loose bound on what refusing an alias bomb may
// allocate: the body, the YAML tree and at most the document limit.
const maxBombAlloc = 256 << 20

func TestRESTImportAliasBomb(t *testing.T) {
	a := startPolicyAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bomb := aliasBomb(1<<20, 999)

	var err error
	alloc := allocatedDuring(func() { _, err = a.client.PolicyPut(ctx, bomb) })
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusRequestEntityTooLarge ||
		!strings.Contains(apiErr.Message, "request: document 1: ") || !strings.Contains(apiErr.Message, "--policy-max-document-size") ||
		strings.Contains(apiErr.Message, "\n") {
		t.Fatalf("PolicyPut(alias bomb) = %v; want one line, 413, naming the document and --policy-max-document-size", err)
	}
	if alloc > maxBombAlloc {
		t.Errorf("refusing the alias bomb allocated %d MiB, want under %d MiB", alloc>>20, maxBombAlloc>>20)
	}
	if e := a.policyLine(t); e.State != models.StateOk {
		t.Errorf("Policy line after the bomb = %s %q, want Ok", e.State, e.Message)
	}
	if _, err := a.client.PolicyPut(ctx, []byte(cidrPolicy)); err != nil {
		t.Errorf("import after the bomb: %v", err)
	}
}

// mkfifo creates a named pipe; reading it blocks until a writer comes.
func mkfifo(t *testing.T, name string) {
	t.Helper()
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hostileFiles puts into dir a FIFO, a symlink to /dev/zero and a 4 MiB
// alias bomb, all named like policy files, and returns their names and
// the reason each is refused, as the Policy line's details say it.
func hostileFiles(t *testing.T, dir, prefix string) map[string]string {
	t.Helper()
	mkfifo(t, filepath.Join(dir, prefix+"fifo.yaml"))
	must(t, os.Symlink("/dev/zero", filepath.Join(dir, prefix+"zero.yaml")))
	celltest.ReplaceFile(t, filepath.Join(dir, prefix+"bomb.yaml"), string(aliasBomb(4<<20, 999)))
	return map[string]string{
		prefix + "fifo.yaml": "skipped: not a regular file (named pipe)",
		prefix + "zero.yaml": "skipped: not a regular file (character device)",
		prefix + "bomb.yaml": "--policy-max-document-size",
	}
}

// checkNamed checks that the Policy line is a Warning naming every file
// of bad with its reason.
func checkNamed(t *testing.T, e models.StatusEntry, bad map[string]string) {
	t.Helper()
	details := strings.Join(e.Details, "\n")
	if e.State != models.StateWarning {
		t.Errorf("Policy line = %s %q, want Warning", e.State, e.Message)
	}
	for name, why := range bad {
		if !strings.Contains(e.Message, name) {
			t.Errorf("Policy line %q does not name %s", e.Message, name)
		}
		found := false
		for _, d := range e.Details {
			found = found || strings.HasPrefix(d, name+" ") && strings.Contains(d, why)
		}
		if !found {
			t.Errorf("Policy details do not say why %s is refused (%s):\n%s", name, why, details)
		}
	}
}

func TestPolicyDirHostileFiles(t *testing.T) {
	dir := t.TempDir()
	celltest.ReplaceFile(t, filepath.Join(dir, "good.yaml"), cnp("good", "web"))
	bad := hostileFiles(t, dir, "")

	done := make(chan *policyAgent, 1)
	go func() { done <- startPolicyAgent(t, "policy-dir="+dir) }()
	var a *policyAgent
	select {
	case a = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the agent did not start within a minute with a FIFO, /dev/zero and an alias bomb in --policy-dir")
	}
	if got := a.ruleNames(); got != "good" {
		t.Errorf("rules at start = %q, want good", got)
	}
	checkNamed(t, a.policyLine(t), bad)
	t.Run("a skipped file is a Warning, not a Failure", func(t *testing.T) {
		// Two probe rounds: the Hive line reads the health the Policy
		// probe set in the round before.
		deadline := time.Now().Add(2*status.ProbeInterval + time.Second)
		for time.Now().Before(deadline) {
			st, err := a.client.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range st.Entries {
				if e.State == models.StateFailure {
					t.Fatalf("%s line is a Failure (%s): a skipped policy file must not fail the agent's health", e.Name, e.Message)
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("added later", func(t *testing.T) {
		for name, why := range hostileFiles(t, dir, "later-") {
			bad[name] = why
		}
		celltest.ReplaceFile(t, filepath.Join(dir, "other.yaml"), cnp("other", "db"))
		celltest.Eventually(t, "other loaded", func() bool { return a.ruleNames() == "good,other" })
		celltest.Eventually(t, "later files named", func() bool {
			msg := a.policyLine(t).Message
			for name := range bad {
				if !strings.Contains(msg, name) {
					return false
				}
			}
			return true
		})
		checkNamed(t, a.policyLine(t), bad)
	})
	t.Run("removed", func(t *testing.T) {
		for name := range bad {
			must(t, os.Remove(filepath.Join(dir, name)))
		}
		celltest.Eventually(t, "Ok", func() bool { return a.policyLine(t).State == models.StateOk })
		if got := a.ruleNames(); got != "good,other" {
			t.Errorf("rules = %q, want good,other", got)
		}
	})
}

// A file that was loaded and becomes unreadable (here a named pipe in its
// place) keeps its rules, and the status says so; readable again, it is
// loaded again.
func TestPolicyDirFileReplacedByPipe(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a.yaml")
	celltest.ReplaceFile(t, name, cnp("a1", "web"))
	a := startPolicyAgent(t, "policy-dir="+dir)
	if got := a.ruleNames(); got != "a1" {
		t.Fatalf("rules at start = %q, want a1", got)
	}
	must(t, os.Remove(name))
	mkfifo(t, name)
	celltest.Eventually(t, "skipped", func() bool { return strings.Contains(a.policyLine(t).Message, "skipped: a.yaml") })
	checkNamed(t, a.policyLine(t), map[string]string{"a.yaml": "skipped: not a regular file (named pipe) (its previous rule stays in force)"})
	if got := a.ruleNames(); got != "a1" {
		t.Errorf("rules = %q, want a1 kept", got)
	}
	must(t, os.Remove(name))
	celltest.ReplaceFile(t, name, cnp("a2", "web"))
	celltest.Eventually(t, "a2", func() bool { return a.ruleNames() == "a2" })
	celltest.Eventually(t, "Ok", func() bool { return a.policyLine(t).State == models.StateOk })
}
