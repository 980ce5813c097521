package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A scenario file that is not a file, or too large, or an alias bomb, is
// an error at once, not a hang or an exhausted machine.
func TestPolicySimulateHostileFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(dir, "bomb.yaml")
	content := "endpoints:\n- &ep {name: a, namespace: x, labels: {k: \"" + strings.Repeat("v", 1<<20) + "\"}}\n" + strings.Repeat("- *ep\n", 999)
	if err := os.WriteFile(bomb, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(scenarioDir, "clustermesh-l4.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"named pipe", []string{"-f", fifo}, "read scenario: read " + fifo + ": not a regular file (named pipe)"},
		{"symlink to /dev/zero", []string{"-f", zero}, "read scenario: read " + zero + ": not a regular file (character device)"},
		{"alias bomb", []string{"-f", bomb}, bomb + ": decode: too large: decodes to more than the limit of 16777216 bytes (16 MiB) set by --policy-max-input-size"},
		{"file over --policy-max-input-size", []string{"-f", seed, "--policy-max-input-size=1000"},
			"read scenario " + seed + ": too large: more than the limit of 1000 bytes set by --policy-max-input-size"},
		{"policy over --policy-max-document-size", []string{"-f", seed, "--policy-max-document-size=100"},
			"too large: decodes to more than the limit of 100 bytes set by --policy-max-document-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := runSimulate(t, tc.args...)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("simulate %v = %.300v\nwant %q", tc.args, err, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("simulate did not return within a minute")
			}
		})
	}
}
