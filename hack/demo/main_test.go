package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"go.uber.org/goleak"
)

// TestMain runs the subcommands the lab executes this binary for (the
// pods' server, entering a namespace, the clusters' etcds), so that the
// tests run the lab in-process; otherwise the tests, then removes the
// shared build.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "serve" || os.Args[1] == "nsexec" || os.Args[1] == "etcd") {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if shared.dir != "" {
			_ = os.RemoveAll(shared.dir)
		}
		os.Exit(code)
	}))
}

// shared is the one build of apiary-agent and apiary the tests share.
var shared struct {
	once sync.Once
	dir  string
	err  error
}

// buildBinaries builds apiary-agent and apiary once per test binary and
// returns their directory. The etcds are this test binary's `etcd`
// subcommand, as they are the demo's.
func buildBinaries(t *testing.T) (binDir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		celltest.SkipUnprivileged(t, "the lab needs root (network namespaces, BPF)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	shared.once.Do(func() {
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if shared.dir, shared.err = os.MkdirTemp("", "apiary-demo-"); shared.err != nil {
			return
		}
		build := exec.Command(goBin, "build", "-o", shared.dir+"/", "./cmd/apiary-agent", "./cmd/apiary")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			shared.err = &buildError{what: "apiary-agent and apiary", out: string(out), err: err}
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.dir
}

type buildError struct {
	what, out string
	err       error
}

func (e *buildError) Error() string { return "build " + e.what + ": " + e.err.Error() + "\n" + e.out }
