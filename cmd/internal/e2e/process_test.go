package e2e_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// e2eVersion is linked into the binaries to check that -X works.
const e2eVersion = "1.2.3-e2e"

// binaries are built once for every test of the package, into a
// directory TestMain removes.
var binaries struct {
	once sync.Once
	dir  string
	err  error
}

// buildBinaries builds apiary-agent, apiary and apiary-cni (once per
// test binary); cniPluginDir returns the directory apiary-cni is in.
func buildBinaries(t *testing.T) (agent, cli string) {
	t.Helper()
	binaries.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if binaries.dir, binaries.err = os.MkdirTemp("", "apiary-e2e-"); binaries.err != nil {
			return
		}
		build := exec.Command(goBin, "build", "-o", binaries.dir+"/",
			"-ldflags", "-X github.com/apiary-net/apiary/cells/version.Version="+e2eVersion,
			"github.com/apiary-net/apiary/cmd/apiary-agent", "github.com/apiary-net/apiary/cmd/apiary",
			"github.com/apiary-net/apiary/cmd/apiary-cni")
		if out, err := build.CombinedOutput(); err != nil {
			binaries.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
	return filepath.Join(binaries.dir, "apiary-agent"), filepath.Join(binaries.dir, "apiary")
}

// cniPluginDir is the directory of the apiary-cni buildBinaries built:
// a CNI plugin path.
func cniPluginDir(t *testing.T) string {
	t.Helper()
	buildBinaries(t)
	return binaries.dir
}

// removeBinaries deletes what buildBinaries built.
func removeBinaries() {
	if binaries.dir != "" {
		_ = os.RemoveAll(binaries.dir)
	}
}

// agentProcess is a running apiary-agent whose log is collected.
type agentProcess struct {
	cmd     *exec.Cmd
	started chan struct{}
	exited  chan struct{}
	err     error // of Wait, set before exited is closed

	mu  sync.Mutex
	log bytes.Buffer
}

// startAgent starts apiary-agent with args and collects its log. Without
// a --bpf-root in args, the agent pins under a private bpffs of t.
func startAgent(t *testing.T, bin string, args ...string) *agentProcess {
	t.Helper()
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--bpf-root=") }) {
		args = append(args, "--bpf-root="+bpfmaptest.Root(t))
	}
	p := &agentProcess{cmd: exec.Command(bin, args...), started: make(chan struct{}), exited: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start apiary-agent: %v", err)
	}
	go p.collect(stderr)
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// collect reads the log, signals the "Started" line (text or JSON log
// format) and waits for exit.
func (p *agentProcess) collect(r io.Reader) {
	sc := bufio.NewScanner(r)
	once := sync.Once{}
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.log.WriteString(line + "\n")
		p.mu.Unlock()
		if strings.Contains(line, "msg=Started") || strings.Contains(line, `"msg":"Started"`) {
			once.Do(func() { close(p.started) })
		}
	}
	p.err = p.cmd.Wait()
	close(p.exited)
}

// Log returns what the agent logged so far.
func (p *agentProcess) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// waitStarted waits for the "Started" log line.
func (p *agentProcess) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-p.started:
	case <-p.exited:
		t.Fatalf("apiary-agent exited before starting (%v):\n%s", p.err, p.Log())
	case <-time.After(time.Minute):
		t.Fatalf("apiary-agent did not start within a minute:\n%s", p.Log())
	}
}

// wait waits for the agent to exit and returns its exit code.
func (p *agentProcess) wait(t *testing.T) int {
	t.Helper()
	return p.waitWithin(t, time.Minute)
}

// waitWithin waits at most d for the agent to exit and returns its exit
// code.
func (p *agentProcess) waitWithin(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(d):
		t.Fatalf("apiary-agent did not exit within %s:\n%s", d, p.Log())
	}
	var exitErr *exec.ExitError
	if errors.As(p.err, &exitErr) {
		return exitErr.ExitCode()
	}
	if p.err != nil {
		t.Fatalf("wait for apiary-agent: %v", p.err)
	}
	return 0
}

func (p *agentProcess) terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("send SIGTERM: %v", err)
	}
}

// runCLI runs the apiary binary and returns its exit code and output.
func runCLI(t *testing.T, bin, socket string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "APIARY_SOCK="+socket)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run apiary %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}
