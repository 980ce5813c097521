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

// ControllerManagerBinaryEnv names the environment variable that points
// to a kube-controller-manager binary, overriding
// hack/tools/bin/kube-controller-manager.
const ControllerManagerBinaryEnv = "APIARY_KUBE_CONTROLLER_MANAGER"

// modulePath is the main module, whose root holds hack/tools.
const modulePath = "github.com/apiary-net/apiary"

// tool is a Kubernetes binary of hack/tools/kube, found once per test
// binary.
type tool struct {
	name, env string
	once      sync.Once
	path      string
	err       error
}

var (
	apiserverTool         = &tool{name: "kube-apiserver", env: BinaryEnv}
	controllerManagerTool = &tool{name: "kube-controller-manager", env: ControllerManagerBinaryEnv}
)

// Binary returns the path of the kube-apiserver binary: $APIARY_KUBE_APISERVER,
// or hack/tools/bin/kube-apiserver of the repository, built from
// hack/tools/kube when it is missing (the Go build cache makes that quick
// after the first time).
func Binary() (string, error) { return apiserverTool.find() }

// ControllerManagerBinary returns the path of the kube-controller-manager
// binary: $APIARY_KUBE_CONTROLLER_MANAGER, or
// hack/tools/bin/kube-controller-manager, built as Binary builds the API
// server (`make kube-controller-manager`).
func ControllerManagerBinary() (string, error) { return controllerManagerTool.find() }

func (t *tool) find() (string, error) {
	t.once.Do(func() { t.path, t.err = t.findOrBuild() })
	return t.path, t.err
}

func (t *tool) findOrBuild() (string, error) {
	if p := os.Getenv(t.env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", t.env, err)
		}
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "hack", "tools", "bin", t.name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	return bin, t.build(filepath.Join(root, "hack", "tools", "kube"), bin)
}

// build builds the binary into bin, through a temporary name so that
// packages tested in parallel never run a half-written binary.
func (t *tool) build(dir, bin string) error {
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return fmt.Errorf("build %s: %w", t.name, err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	ldflags, err := versionFlags(dir)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", tmp, "k8s.io/kubernetes/cmd/"+t.name)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("build %s in %s: %w: %s", t.name, dir, err, strings.TrimSpace(out.String()))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return fmt.Errorf("build %s: %w", t.name, err)
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
		return "", fmt.Errorf("build Kubernetes: version of k8s.io/kubernetes: %w", err)
	}
	v := strings.TrimSpace(string(out)) // v1.35.4
	parts := strings.Split(v, ".")
	if len(parts) < 3 {
		return "", fmt.Errorf("build Kubernetes: unexpected version %q", v)
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
