package k8stest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// BinaryEnv names the environment variable that points to a
// kube-apiserver binary, overriding hack/tools/bin/kube-apiserver.
const BinaryEnv = "APIARY_KUBE_APISERVER"

// modulePath is the main module, whose root holds hack/tools.
const modulePath = "github.com/apiary-net/apiary"

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// Binary returns the path of the kube-apiserver binary: $APIARY_KUBE_APISERVER,
// or hack/tools/bin/kube-apiserver of the repository, built from
// hack/tools/kube when it is missing (the Go build cache makes that quick
// after the first time).
func Binary() (string, error) {
	binaryOnce.Do(func() { binaryPath, binaryErr = findOrBuild() })
	return binaryPath, binaryErr
}

func findOrBuild() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", BinaryEnv, err)
		}
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "hack", "tools", "bin", "kube-apiserver")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	return bin, build(filepath.Join(root, "hack", "tools", "kube"), bin)
}

// build builds kube-apiserver into bin, through a temporary name so that
// packages tested in parallel never run a half-written binary.
func build(dir, bin string) error {
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return fmt.Errorf("build kube-apiserver: %w", err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	ldflags, err := versionFlags(dir)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", tmp, "k8s.io/kubernetes/cmd/kube-apiserver")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("build kube-apiserver in %s: %w: %s", dir, err, strings.TrimSpace(out.String()))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return fmt.Errorf("build kube-apiserver: %w", err)
	}
	return nil
}

// versionFlags sets the server's version (/version) as Kubernetes'
// release builds do, from the k8s.io/kubernetes version of the module:
// the Makefile does the same.
func versionFlags(dir string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("build kube-apiserver: version of k8s.io/kubernetes: %w", err)
	}
	v := strings.TrimSpace(string(out)) // v1.35.4
	parts := strings.Split(v, ".")
	if len(parts) < 3 {
		return "", fmt.Errorf("build kube-apiserver: unexpected version %q", v)
	}
	const pkg = "k8s.io/component-base/version"
	return fmt.Sprintf("-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean",
		pkg, v, pkg, pkg, parts[1], pkg), nil
}

// repoRoot finds the directory of the main module's go.mod above the
// working directory (a test runs in its package's directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the repository: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(data), []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find the repository: no go.mod of " + modulePath + " above the working directory")
		}
		dir = parent
	}
}
