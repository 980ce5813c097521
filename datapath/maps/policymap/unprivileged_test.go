package policymap_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
)

// TestUnprivilegedRunFailsWhenRequired runs this package's BPF test as
// user nobody (a copy of this test binary, re-executed): it skips
// without celltest.RequirePrivilegedEnv and fails with it set to 1, so a
// CI run on a machine without BPF cannot pass with the tests unrun.
func TestUnprivilegedRunFailsWhenRequired(t *testing.T) {
	if os.Geteuid() != 0 {
		celltest.SkipUnprivileged(t, "needs root to switch to user nobody")
	}
	bin := celltest.CopyOfTestBinary(t)
	run := func(require string) (string, error) {
		cmd := exec.Command(bin, "-test.run=^TestSyncWritesOnlyTheDifference$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), celltest.RequirePrivilegedEnv+"="+require)
		cmd.Dir = filepath.Dir(bin)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("0")
	if err != nil || !strings.Contains(out, "--- SKIP: TestSyncWritesOnlyTheDifference") {
		t.Fatalf("as nobody without %s: err %v, want a skip:\n%s", celltest.RequirePrivilegedEnv, err, out)
	}
	out, err = run("1")
	if err == nil || !strings.Contains(out, "--- FAIL: TestSyncWritesOnlyTheDifference") ||
		!strings.Contains(out, celltest.RequirePrivilegedEnv+"=1") {
		t.Fatalf("as nobody with %s=1: err %v, want a failure naming it:\n%s", celltest.RequirePrivilegedEnv, err, out)
	}
}
