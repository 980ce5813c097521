package celltest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// RequirePrivilegedEnv is the environment variable that turns a test's
// skip for lack of root, BPF, bpffs, network namespaces or a built tool
// into a failure. CI sets it to 1 (.ci/run), so a run on a machine that
// cannot do these things fails instead of passing with the tests unrun.
const RequirePrivilegedEnv = "APIARY_TEST_REQUIRE_PRIVILEGED"

// SkipUnprivileged skips t because the machine lacks what the test needs
// (format and args say what), or fails it when RequirePrivilegedEnv is 1.
func SkipUnprivileged(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(RequirePrivilegedEnv) == "1" {
		t.Fatalf("%s (%s=1: this test may not skip)", msg, RequirePrivilegedEnv)
	}
	t.Skip(msg)
}

// CopyOfTestBinary copies the running test binary into a directory any
// user can reach and returns its path, for a test that re-executes it as
// another user (nobody) to see what happens without privileges.
func CopyOfTestBinary(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
