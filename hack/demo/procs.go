package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// proc is a process of the lab (an etcd, an agent, a pod's server)
// running in one of the lab's namespaces.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // of Wait, set before done is closed
}

// startIn starts prog with args in the namespace at nsPath through
// `demo nsexec`, its output appended to logPath. The process is in its
// own process group so that a Ctrl-C on the terminal reaches the runner
// only, which then stops everything in order.
func startIn(name, nsPath, logPath, prog string, args ...string) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the demo executable: %w", err)
	}
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	defer out.Close()
	cmd := exec.Command(self, append([]string{"nsexec", nsPath, prog}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// failure says why the process ended, with the end of its log.
func (p *proc) failure() error {
	return fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.name, p.err, p.log, tail(p.log, 12))
}

// stop sends SIGTERM and waits up to grace before SIGKILL.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// nsexec is the `demo nsexec <netns> <program> [args]` subcommand: it
// enters the network namespace and executes the program there (the
// mount namespace stays the machine's, so the agents' pins under
// /sys/fs/bpf outlive them).
func nsexec(args []string) error {
	if len(args) < 2 {
		return errors.New("usage: demo nsexec <netns path> <program> [args...]")
	}
	if err := netnsutil.Enter(args[0]); err != nil {
		return err
	}
	prog, err := exec.LookPath(args[1])
	if err != nil {
		return fmt.Errorf("find %s: %w", args[1], err)
	}
	return syscall.Exec(prog, args[1:], os.Environ())
}

// pidsIn returns the processes whose network namespace is the one at
// path.
func pidsIn(path string) []int {
	var want unix.Stat_t
	if err := unix.Stat(path, &want); err != nil {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(filepath.Join("/proc", e.Name(), "ns/net"), &st) == nil && st.Ino == want.Ino && st.Dev == want.Dev {
			out = append(out, pid)
		}
	}
	return out
}

// killIn ends every process in the namespace at path: SIGTERM, then
// SIGKILL for those still there after grace.
func killIn(path string, grace time.Duration) {
	pids := pidsIn(path)
	for _, pid := range pids {
		_ = unix.Kill(pid, unix.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for len(pidsIn(path)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range pidsIn(path) {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}
