package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// waitTimeout bounds every wait for the program's output.
const waitTimeout = time.Minute

// buildProgram builds hack/embed into a temporary directory.
func buildProgram(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "embed")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// program is a running embed process whose stdout lines the test reads.
type program struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr lockedBuffer
	exited chan struct{}
	err    error // of Wait, once exited is closed

	mu      sync.Mutex
	lines   []string
	newLine chan struct{} // closed and replaced at each line
}

// startProgram runs bin with args; the test's cleanup kills it if it
// still runs.
func startProgram(t *testing.T, bin string, args ...string) *program {
	t.Helper()
	p := &program{t: t, cmd: exec.Command(bin, args...), exited: make(chan struct{}), newLine: make(chan struct{})}
	p.cmd.Stderr = &p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.read(stdout)
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *program) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		close(p.newLine)
		p.newLine = make(chan struct{})
		p.mu.Unlock()
	}
}

// mark returns the number of lines so far, for waitFor.
func (p *program) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lines)
}

// waitFor waits until each pattern matches a line from line since on,
// in any order, and returns each pattern's submatches.
func (p *program) waitFor(since int, patterns ...string) [][]string {
	p.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		p.mu.Lock()
		found, missing := matchAll(p.lines[since:], patterns)
		next := p.newLine
		p.mu.Unlock()
		if missing == "" {
			return found
		}
		select {
		case <-next:
		case <-p.exited:
			p.t.Fatalf("program exited (%v) before printing %q\n%s", p.err, missing, p)
		case <-deadline:
			p.t.Fatalf("no line matches %q within %s\n%s", missing, waitTimeout, p)
		}
	}
}

// matchAll returns the submatches of each pattern's first matching line,
// or the first pattern that matches none.
func matchAll(lines, patterns []string) (found [][]string, missing string) {
	for _, pat := range patterns {
		re := regexp.MustCompile(pat)
		var m []string
		for _, l := range lines {
			if m = re.FindStringSubmatch(l); m != nil {
				break
			}
		}
		if m == nil {
			return nil, pat
		}
		found = append(found, m)
	}
	return found, ""
}

// stop sends SIGTERM and checks that the program exits cleanly.
func (p *program) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(waitTimeout):
		p.t.Fatalf("program did not exit within %s of SIGTERM\n%s", waitTimeout, p)
	}
	if p.err != nil {
		p.t.Fatalf("program exited with %v after SIGTERM\n%s", p.err, p)
	}
	if !strings.Contains(p.stderr.String(), "msg=Stopped") {
		p.t.Errorf("log does not show an orderly stop\n%s", p)
	}
}

// linesOf returns the lines starting with prefix.
func (p *program) linesOf(prefix string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// String returns the output and the log, for failure messages.
func (p *program) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("--- stdout\n%s\n--- stderr\n%s", strings.Join(p.lines, "\n"), p.stderr.String())
}

// lockedBuffer is a bytes.Buffer safe for the writer and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
