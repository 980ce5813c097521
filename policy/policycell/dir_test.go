package policycell_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/policycell"
)

// policyLine returns the "Policy" status line.
func (a *policyAgent) policyLine(t *testing.T) models.StatusEntry {
	t.Helper()
	st, err := a.client.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range st.Entries {
		if e.Name == "Policy" {
			return e
		}
	}
	t.Fatalf("no Policy line in %+v", st.Entries)
	return models.StatusEntry{}
}

// ruleNames returns the policy names of the rules in force, sorted by
// insertion.
func (a *policyAgent) ruleNames() string {
	var names []string
	for _, r := range a.repo.Rules() {
		l, _ := r.Labels.Get("io.cilium.k8s.policy.name")
		names = append(names, l.Value)
	}
	return strings.Join(names, ",")
}

func cnp(name, app string) string {
	return "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: " + name + "}\n" +
		"spec:\n  endpointSelector: {matchLabels: {app: " + app + "}}\n  ingress: [{fromEndpoints: [{matchLabels: {app: x}}]}]\n"
}

func TestPolicyDir(t *testing.T) {
	dir := t.TempDir()
	celltest.ReplaceFile(t, filepath.Join(dir, "a.yaml"), cnp("a1", "web")+"---\n"+cnp("a2", "db"))
	celltest.ReplaceFile(t, filepath.Join(dir, "notes.txt"), "not a policy")
	a := startPolicyAgent(t, "policy-dir="+dir)

	if got := a.ruleNames(); got != "a1,a2" {
		t.Fatalf("rules at start = %q, want a1,a2", got)
	}
	if e := a.policyLine(t); e.State != models.StateOk || e.Message != "2 rules, revision 2, 1 files" {
		t.Errorf("Policy line = %s %q", e.State, e.Message)
	}
	t.Run("add a file", func(t *testing.T) {
		celltest.ReplaceFile(t, filepath.Join(dir, "b.yml"), cnp("b1", "api"))
		celltest.Eventually(t, "b1", func() bool { return a.ruleNames() == "a1,a2,b1" })
	})
	t.Run("change a file replaces its rules only", func(t *testing.T) {
		celltest.ReplaceFile(t, filepath.Join(dir, "a.yaml"), cnp("a3", "web"))
		celltest.Eventually(t, "a3", func() bool { return a.ruleNames() == "b1,a3" })
	})
	t.Run("broken file keeps its rules", func(t *testing.T) {
		celltest.ReplaceFile(t, filepath.Join(dir, "b.yml"), cnp("b2", "api")+"  egress: [{toPorts: [{ports: [{port: \"99999\"}]}]}]\n")
		celltest.Eventually(t, "Warning", func() bool { return a.policyLine(t).State == models.StateWarning })
		e := a.policyLine(t)
		if !strings.Contains(e.Message, "rejected: b.yml") || !strings.Contains(strings.Join(e.Details, "\n"), "b.yml: document 1") {
			t.Errorf("Policy line = %q %q; want it to name b.yml and its document", e.Message, e.Details)
		}
		if got := a.ruleNames(); got != "b1,a3" {
			t.Errorf("rules = %q, want b1,a3 (b.yml's old rules kept)", got)
		}
	})
	t.Run("remove a file", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, "b.yml")); err != nil {
			t.Fatal(err)
		}
		celltest.Eventually(t, "b1 gone", func() bool { return a.ruleNames() == "a3" })
		celltest.Eventually(t, "Ok", func() bool { return a.policyLine(t).State == models.StateOk })
	})
}

// TestPolicyDirConfigMap swaps files like a Kubernetes ConfigMap mount:
// name -> ..data/name, ..data -> ..<timestamp>, the swap a rename of a
// new ..data symlink.
func TestPolicyDirConfigMap(t *testing.T) {
	dir := t.TempDir()
	mkVersion := func(version, content string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, version), 0o755); err != nil {
			t.Fatal(err)
		}
		celltest.ReplaceFile(t, filepath.Join(dir, version, "policy.yaml"), content)
	}
	mkVersion("..2026_11_22_01", cnp("v1", "web"))
	must(t, os.Symlink("..2026_11_22_01", filepath.Join(dir, "..data")))
	must(t, os.Symlink("..data/policy.yaml", filepath.Join(dir, "policy.yaml")))
	a := startPolicyAgent(t, "policy-dir="+dir)
	if got := a.ruleNames(); got != "v1" {
		t.Fatalf("rules at start = %q, want v1", got)
	}

	mkVersion("..2026_11_22_02", cnp("v2", "web"))
	must(t, os.Symlink("..2026_11_22_02", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	must(t, os.RemoveAll(filepath.Join(dir, "..2026_11_22_01")))
	celltest.Eventually(t, "v2", func() bool { return a.ruleNames() == "v2" })
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPolicyDirMissing(t *testing.T) {
	h := celltest.New(t, []string{"policy-dir=" + filepath.Join(t.TempDir(), "nope")},
		kvstorecell.Cell, localnode.Cell, identitycell.Cell, policycell.Cell)
	err := h.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--policy-dir") {
		t.Errorf("start with a missing --policy-dir = %v, want an error naming the flag", err)
	}
	if err == nil {
		_ = h.Stop(context.Background())
	}
}
