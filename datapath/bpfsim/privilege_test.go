package bpfsim_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/bpfsim"
	"github.com/apiary-net/apiary/policy/simulate"
)

const unprivilegedEnv = "APIARY_DPSIM_UNPRIVILEGED_HELPER"

// TestUnprivileged runs New as user nobody (a copy of this test binary,
// re-executed): it must fail with ErrPrivilege, saying root is needed.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		celltest.SkipUnprivileged(t, "needs root to switch to user nobody")
	}
	bin := celltest.CopyOfTestBinary(t)
	dir := filepath.Dir(bin)
	cmd := exec.Command(bin, "-test.run=^TestUnprivilegedHelper$", "-test.v")
	cmd.Env = append(os.Environ(), unprivilegedEnv+"=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "refused as expected") {
		t.Fatalf("helper did not run:\n%s", out)
	}
}

// TestUnprivilegedHelper is TestUnprivileged's child.
func TestUnprivilegedHelper(t *testing.T) {
	if os.Getenv(unprivilegedEnv) == "" {
		t.Skip("run by TestUnprivileged")
	}
	sim, err := simulate.Load("s.yaml", []byte("queries: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := bpfsim.New(testLogger(), sim.Model())
	if err == nil {
		d.Close()
		t.Fatal("New succeeded without privileges")
	}
	if !errors.Is(err, bpfsim.ErrPrivilege) || !strings.Contains(err.Error(), "needs root") {
		t.Fatalf("error %v, want ErrPrivilege", err)
	}
	t.Logf("refused as expected: %v", err)
}
