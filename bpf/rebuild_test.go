package bpf_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
)

// TestObjectsRebuild compiles the C sources again, with the bpf2go
// command of doc.go's go:generate line, into a temporary directory, and
// compares the result byte for byte with the committed objects and Go
// code: the committed object is what these sources compile to, not only
// what the lock file says. The build is reproducible with the compiler
// sources.lock names (`make bpf-toolchain` installs it).
func TestObjectsRebuild(t *testing.T) {
	clang, strip := envOr("BPF_CLANG", "clang-19"), envOr("BPF_STRIP", "llvm-strip-19")
	for _, tool := range []string{clang, strip} {
		if _, err := exec.LookPath(tool); err != nil {
			celltest.SkipUnprivileged(t, "%s not installed (make bpf-toolchain): %v", tool, err)
		}
	}
	out := t.TempDir()
	for _, args := range bpf2goArgs(t) {
		// -output-dir goes before the identifier and the sources.
		cmdArgs := append([]string{"run", "github.com/cilium/ebpf/cmd/bpf2go", "-output-dir", out}, args...)
		cmd := exec.Command("go", cmdArgs...)
		cmd.Env = append(os.Environ(), "GOPACKAGE=bpf", "BPF_CLANG="+clang, "BPF_STRIP="+strip)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("bpf2go: %v\n%s", err, b)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("bpf2go wrote nothing")
	}
	for _, e := range entries {
		rebuilt, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatalf("%s is generated but not committed: run `make bpf` (%v)", e.Name(), err)
		}
		if !bytes.Equal(rebuilt, committed) {
			t.Errorf("committed %s differs from what %s compiles these sources to: run `make bpf`", e.Name(), clang)
		}
	}
}

// bpf2goArgs returns the arguments of each bpf2go go:generate line in
// doc.go, with ${BPF_CLANG} and ${BPF_STRIP} expanded from the
// environment as go generate does.
func bpf2goArgs(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const prefix = "//go:generate go run github.com/cilium/ebpf/cmd/bpf2go "
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var all [][]string
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			all = append(all, strings.Fields(os.Expand(rest, func(k string) string {
				return envOr(k, map[string]string{"BPF_CLANG": "clang-19", "BPF_STRIP": "llvm-strip-19"}[k])
			})))
		}
	}
	if len(all) == 0 {
		t.Fatal("doc.go has no bpf2go go:generate line")
	}
	return all
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
