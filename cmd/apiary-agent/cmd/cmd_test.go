package cmd_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/cmd/apiary-agent/cmd"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

func execute(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cmd.Execute(context.Background(), args, &out, &errOut, agent.Agent)
	return code, out.String(), errOut.String()
}

func TestHelpListsEveryFlag(t *testing.T) {
	code, out, _ := execute(t, "--help")
	if code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	for _, flag := range []string{
		"--config-dir", "--log-level", "--log-format", "--hive-start-timeout", "--hive-stop-timeout",
		"--socket-path", "--state-dir", "--prometheus-serve-addr", "--version",
		"--cluster-name", "--cluster-id", "--node-name", "--node-ip", "--pod-cidr",
		"--bpf-root", "--bpf-attach-mode", "--bpf-policy-map-max", "--conntrack-gc-interval", "--datapath-netns",
	} {
		if !strings.Contains(out, flag) {
			t.Errorf("--help does not list %s", flag)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	code, out, _ := execute(t, "--version")
	if re := regexp.MustCompile(`^apiary-agent dev \(go[^)]+\)\n$`); code != 0 || !re.MatchString(out) {
		t.Errorf("--version = %d %q", code, out)
	}
}

func TestHiveCommand(t *testing.T) {
	t.Setenv("APIARY_STATE_DIR", "/srv/apiary")
	configDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(configDir, "prometheus-serve-addr"), []byte(":9972\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := execute(t, "hive", "--socket-path=/tmp/apiary-test.sock", "--config-dir="+configDir)
	if code != 0 {
		t.Fatalf("hive exited %d: %s", code, errOut)
	}
	for _, want := range []string{
		"module api-server: REST API on a unix socket",
		"--socket-path=/tmp/apiary-test.sock (flag)",
		"--state-dir=/srv/apiary (env)",
		"--prometheus-serve-addr=:9972 (config-dir)",
		"module status:",
		"Start hooks:",
		"Stop hooks:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("apiary-agent hive output has no %q", want)
		}
	}
}

func TestDotGraph(t *testing.T) {
	code, out, _ := execute(t, "hive", "dot-graph")
	if code != 0 || !strings.HasPrefix(out, "digraph {") || !strings.Contains(out, "api.Server") {
		t.Errorf("dot-graph = %d %.80q, want a DOT graph", code, out)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown flag", args: []string{"--no-such-flag"}, want: "apiary-agent: unknown flag: --no-such-flag\n"},
		{name: "argument", args: []string{"extra"}, want: "apiary-agent: unknown command \"extra\" for \"apiary-agent\"\n"},
		{name: "invalid config", args: []string{"--socket-path=relative.sock"},
			want: "apiary-agent: invalid configuration: --socket-path: \"relative.sock\" is not an absolute path\n"},
		{name: "node IP", args: []string{"--node-ip=10.0.0.300"},
			want: "apiary-agent: invalid configuration: --node-ip: \"10.0.0.300\" is not an IP address"},
		{name: "pod CIDR", args: []string{"--pod-cidr=10.0.1.7/24"},
			want: "apiary-agent: invalid configuration: --pod-cidr: 10.0.1.7/24 has host bits set (did you mean 10.0.1.0/24?)"},
		{name: "cluster name", args: []string{"--cluster-name=Prod"},
			want: "apiary-agent: invalid configuration: --cluster-name: \"Prod\" must be"},
		{name: "cluster id", args: []string{"--cluster-id=300"},
			want: "apiary-agent: invalid configuration: --cluster-id: 300 is out of range 0..255\n"},
		{name: "policy map size", args: []string{"--bpf-policy-map-max=0"},
			want: "apiary-agent: invalid configuration: --bpf-policy-map-max: 0 is not between 1 and 1048576\n"},
		{name: "labels", args: []string{"--labels=(["},
			want: "apiary-agent: invalid configuration: --labels: label prefix \"([\": error parsing regexp: missing closing ]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := execute(t, tt.args...)
			// Cells constructed before the failing one may have logged.
			lines := strings.SplitAfter(errOut, "\n")
			last := lines[len(lines)-1]
			if last == "" && len(lines) > 1 {
				last = lines[len(lines)-2]
			}
			if code != 1 || !strings.HasPrefix(last, tt.want) {
				t.Errorf("= %d %q, want 1 and %q", code, errOut, tt.want)
			}
		})
	}
}

// lineWaiter is a log writer that reports when a line contains a string.
type lineWaiter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, "apiary.sock")
	bpfRoot := bpfmaptest.Root(t)
	logs := &lineWaiter{want: "msg=Started", seen: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- cmd.Execute(ctx, []string{"--socket-path=" + socket, "--state-dir=" + filepath.Join(dir, "state"),
			"--bpf-root=" + bpfRoot},
			io.Discard, logs, agent.Agent)
	}()
	select {
	case <-logs.seen:
	case code := <-exit:
		t.Fatalf("agent exited %d before starting:\n%s", code, logs)
	case <-time.After(time.Minute):
		t.Fatalf("agent did not start within a minute:\n%s", logs)
	}
	if st, err := client.New(socket).Status(t.Context()); err != nil || st.State != "Ok" {
		t.Errorf("status of the running agent = %+v, %v", st, err)
	}
	cancel()
	if code := <-exit; code != 0 {
		t.Errorf("agent exited %d after a clean stop:\n%s", code, logs)
	}
	if !regexp.MustCompile(`(?s)msg=Stopping.*msg=Stopped`).MatchString(logs.String()) {
		t.Errorf("log does not show an orderly stop:\n%s", logs)
	}
}

func TestRunStartFailure(t *testing.T) {
	dir := t.TempDir()
	stateFile := filepath.Join(dir, "state")
	if err := os.WriteFile(stateFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := execute(t, "--socket-path="+filepath.Join(dir, "apiary.sock"), "--state-dir="+stateFile)
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.HasPrefix(last, "apiary-agent: start hook") || !strings.Contains(last, "exists and is not a directory") {
		t.Errorf("= %d, last line %q; want 1 and the start error on one line\n%s", code, last, errOut)
	}
}

// TestMountBPFFS: the DaemonSet's mount-bpf-fs init step mounts a bpffs
// where there is none and leaves one that is there.
func TestMountBPFFS(t *testing.T) {
	if os.Geteuid() != 0 {
		celltest.SkipUnprivileged(t, "mount-bpf-fs needs root")
	}
	dir := t.TempDir()
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	code, out, errOut := execute(t, "mount-bpf-fs", "--path="+dir)
	if code != 0 || out != "Mounted a bpffs on "+dir+"\n" {
		t.Fatalf("mount-bpf-fs = %d %q %q", code, out, errOut)
	}
	if ok, err := bpfmap.IsBPFFS(dir); err != nil || !ok {
		t.Fatalf("%s is not a bpffs after mount-bpf-fs: %v", dir, err)
	}
	code, out, _ = execute(t, "mount-bpf-fs", "--path="+dir)
	if code != 0 || out != dir+" is a bpffs already\n" {
		t.Fatalf("mount-bpf-fs again = %d %q", code, out)
	}
	code, _, errOut = execute(t, "mount-bpf-fs", "--path="+filepath.Join(dir, "missing"))
	if code != 1 || !strings.Contains(errOut, "mount-bpf-fs: statfs "+filepath.Join(dir, "missing")) {
		t.Fatalf("mount-bpf-fs on a missing directory = %d %q", code, errOut)
	}
}
