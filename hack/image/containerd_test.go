package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// containerd is a containerd daemon of the test's own, on a socket and
// directories of its own (the host's containerd, if any, is untouched),
// with the CRI plugin off.
type containerd struct {
	dir, sock string
}

// startContainerd starts containerd, or skips when containerd, ctr or
// root are missing; under APIARY_TEST_REQUIRE_PRIVILEGED=1 it fails
// instead (make test installs containerd: the container-tools target).
func startContainerd(t *testing.T) *containerd {
	t.Helper()
	miss := ""
	for _, bin := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			miss = bin + " is not installed (make container-tools installs Debian's containerd)"
		}
	}
	if os.Geteuid() != 0 {
		miss = "not root"
	}
	if miss != "" {
		if os.Getenv("APIARY_TEST_REQUIRE_PRIVILEGED") == "1" {
			t.Fatalf("APIARY_TEST_REQUIRE_PRIVILEGED=1: %s", miss)
		}
		t.Skip(miss)
	}
	dir, err := os.MkdirTemp("", "apiary-image-containerd-")
	if err != nil {
		t.Fatal(err)
	}
	c := &containerd{dir: dir, sock: filepath.Join(dir, "containerd.sock")}
	cfg := fmt.Sprintf("version = 2\nroot = %q\nstate = %q\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = %q\n",
		filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.sock)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command("containerd", "--config", filepath.Join(dir, "config.toml"))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(unix.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		unmountUnder(dir)
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove containerd's directory: %v", err)
		}
		if t.Failed() {
			t.Logf("containerd's log:\n%s", log.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.ctr(t, "version"); err == nil {
			return c
		} else if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer on %s: %v\n%s", c.sock, err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ctr runs ctr against the test's containerd in namespace apiary-test.
func (c *containerd) ctr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.sock, "--namespace", "apiary-test"}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// unmountUnder lazily unmounts what containerd left mounted below dir
// (snapshots of a container killed mid-run), deepest first.
func unmountUnder(dir string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			mounts = append(mounts, f[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = unix.Unmount(mounts[i], unix.MNT_DETACH)
	}
}

// importAndRun imports the archive with `ctr images import` (as a node
// loads an image built elsewhere) and runs the agent, the CLI and the
// CNI plugin from it in containers of runc, as the image's user.
func importAndRun(t *testing.T, archive, ref string) {
	c := startContainerd(t)
	if out, err := c.ctr(t, "images", "import", archive); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(out, ref) {
		t.Errorf("ctr images import printed %q, want the reference %s", out, ref)
	}
	refs, err := c.ctr(t, "images", "ls", "-q")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(refs) != ref {
		t.Fatalf("ctr images ls -q = %q, want %s", refs, ref)
	}
	for i, run := range []struct{ opts, args, want string }{
		{"", "/usr/local/bin/apiary-agent --version", "apiary-agent v9.9.9-test "},
		{"", "apiary --help", "Inspect and control the apiary agent"},
		{"--env CNI_COMMAND=VERSION", "apiary-cni", `{"cniVersion":`},
		{"", "id -u", ""}, // no shell tools in the image: a missing binary must fail
	} {
		args := append(append([]string{"run", "--rm"}, strings.Fields(run.opts)...), ref, fmt.Sprintf("apiary-test-%d", i))
		out, err := c.ctr(t, append(args, strings.Fields(run.args)...)...)
		switch {
		case run.want == "" && err == nil:
			t.Errorf("ctr run %s succeeded (%q): the image should hold only apiary's binaries", run.args, out)
		case run.want != "" && (err != nil || !strings.HasPrefix(out, run.want)):
			t.Errorf("ctr run %s %s = %q, %v; want output starting %q", run.opts, run.args, out, err, run.want)
		}
	}
}
