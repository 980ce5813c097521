// Package meshbench measures what an apiary agent meshed with a large
// remote cluster costs next to Cilium v1.20's KVStoreMesh reading the
// same remote in the same run: time to ready and memory (RSS) of each,
// each side in a process of its own.
//
// The parent (this package, in cmd/meshbench or the test) holds the
// etcds, embedded: the remote cluster2, filled by cmbench.Fill, and a
// fresh local etcd per KVStoreMesh run for it to mirror into. It builds
// the two sides (apiaryside, kvstoremeshside) with `go build`, so
// neither links the other's code or the etcd server, runs them one
// after the other (alternating which goes first), and reads each
// side's VmRSS and VmHWM from /proc/<pid>/status once it is ready and
// has idled for a settle time; then it asks for the live heap after a
// forced GC (see package side). Nothing here asserts on time or size.
package meshbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/hack/bench/cmbench"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// Sample is one run of one side.
type Sample struct {
	Ready    time.Duration // from the side's hive start until ready
	RSS, HWM uint64        // VmRSS after the settle time, VmHWM (peak) then
	LiveHeap uint64        // Go heap in use after a forced GC, after RSS was read
}

// Results are one meshbench run.
type Results struct {
	Size                cmbench.Size
	Settle              time.Duration
	Fill                time.Duration
	Apiary, KVStoreMesh []Sample
}

// Options are what Measure runs.
type Options struct {
	Size   cmbench.Size
	Runs   int           // runs per side
	Settle time.Duration // idle time between ready and reading the RSS
	// Dir holds the built sides; a temporary directory when empty.
	Dir string
	// MemProfile, when set, is where each side writes a heap profile of
	// its last run after ready and a GC (<MemProfile>.apiary,
	// <MemProfile>.kvstoremesh).
	MemProfile string
}

const pkg = "github.com/apiary-net/apiary/hack/bench/meshbench/"

// Measure starts the remote etcd, fills it, builds both sides and runs
// each o.Runs times, alternating which goes first.
func Measure(tb testing.TB, o Options) (Results, error) {
	r := Results{Size: o.Size, Settle: o.Settle}
	dir := o.Dir
	if dir == "" {
		dir = tb.TempDir()
	}
	apiaryBin, kvsmBin := filepath.Join(dir, "apiaryside"), filepath.Join(dir, "kvstoremeshside")
	if err := build(apiaryBin, pkg+"apiaryside"); err != nil {
		return r, err
	}
	if err := build(kvsmBin, pkg+"kvstoremeshside"); err != nil {
		return r, err
	}
	srv := kvstoretest.StartServer(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	begin := time.Now()
	if err := cmbench.Fill(ctx, srv.Client(), o.Size); err != nil {
		return r, err
	}
	r.Fill = time.Since(begin)
	// One untimed read of the whole remote first, so that neither side
	// is the first to read it (a cold etcd).
	if _, err := cmbench.PeerRead(ctx, srv.Client(), o.Size); err != nil {
		return r, fmt.Errorf("warm up: %w", err)
	}
	remoteCfg := srv.WriteConfigFile()
	var apiaryProf, kvsmProf []string
	if o.MemProfile != "" {
		apiaryProf, kvsmProf = []string{"-memprofile", o.MemProfile + ".apiary"}, []string{"-memprofile", o.MemProfile + ".kvstoremesh"}
	}
	runApiary := func() error {
		s, err := runSide(ctx, exec.Command(apiaryBin, append(apiaryProf, "-etcd-config", remoteCfg, "-remote", cmbench.RemoteName,
			"-remote-id", strconv.Itoa(cmbench.RemoteID), "-nodes", strconv.Itoa(o.Size.Nodes),
			"-identities", strconv.Itoa(o.Size.Identities), "-endpoints", strconv.Itoa(o.Size.Endpoints))...), o.Settle)
		r.Apiary = append(r.Apiary, s)
		return err
	}
	runKVStoreMesh := func() error {
		s, err := runKVStoreMeshSide(ctx, tb, kvsmBin, remoteCfg, o.Settle, kvsmProf)
		r.KVStoreMesh = append(r.KVStoreMesh, s)
		return err
	}
	for i := range o.Runs {
		sides := []func() error{runApiary, runKVStoreMesh}
		if i%2 == 1 {
			slices.Reverse(sides)
		}
		for _, side := range sides {
			if err := side(); err != nil {
				return r, fmt.Errorf("run %d: %w", i+1, err)
			}
		}
	}
	return r, nil
}

// runKVStoreMeshSide runs KVStoreMesh with a fresh local etcd (stopped
// afterwards) and the remote's config file in its clustermesh config
// directory.
func runKVStoreMeshSide(ctx context.Context, tb testing.TB, bin, remoteCfg string, settle time.Duration, args []string) (Sample, error) {
	localSrv := kvstoretest.StartServer(tb)
	defer localSrv.Stop()
	dir, err := os.MkdirTemp(tb.TempDir(), "kvstoremesh")
	if err != nil {
		return Sample{}, err
	}
	meshDir := filepath.Join(dir, "clustermesh")
	if err := os.Mkdir(meshDir, 0o755); err != nil {
		return Sample{}, err
	}
	data, err := os.ReadFile(remoteCfg)
	if err != nil {
		return Sample{}, err
	}
	if err := os.WriteFile(filepath.Join(meshDir, cmbench.RemoteName), data, 0o600); err != nil {
		return Sample{}, err
	}
	return runSide(ctx, exec.Command(bin, append(args, "-local-config", localSrv.WriteConfigFile(), "-clustermesh-config", meshDir,
		"-remote", cmbench.RemoteName, "-state-dir", dir)...), settle)
}

// build builds the side pkg into bin.
func build(bin, pkg string) error {
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		return fmt.Errorf("build %s: %w\n%s", pkg, err, out)
	}
	return nil
}

// runSide starts cmd, waits for its "ready" line, idles for settle,
// reads its memory, asks for its live heap and stops it.
func runSide(ctx context.Context, cmd *exec.Cmd, settle time.Duration) (Sample, error) {
	var s Sample
	name := filepath.Base(cmd.Path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return s, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return s, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if os.Getenv("MESHBENCH_STDERR") != "" { // e.g. with GODEBUG=gctrace=1
		cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
	}
	if err := cmd.Start(); err != nil {
		return s, fmt.Errorf("start %s: %w", name, err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	lines := bufio.NewScanner(stdout)
	ready, err := readValue(lines, "ready")
	if err != nil {
		return s, fmt.Errorf("%s: %w (stderr: %s)", name, err, lastLines(stderr.String()))
	}
	s.Ready = time.Duration(ready)
	time.Sleep(settle)
	m, err := readProcMemory(cmd.Process.Pid)
	if err != nil {
		return s, err
	}
	s.RSS, s.HWM = m.RSS, m.HWM
	if _, err := io.WriteString(stdin, "gc\n"); err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	heap, err := readValue(lines, "heap")
	if err != nil {
		return s, fmt.Errorf("%s: %w (stderr: %s)", name, err, lastLines(stderr.String()))
	}
	s.LiveHeap = uint64(heap)
	return s, nil
}

// readValue reads up to the line "<word> <int>", skipping other output.
func readValue(lines *bufio.Scanner, word string) (int64, error) {
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), word+" "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("exited before %q: %v", word, lines.Err())
}

func lastLines(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// Median returns the median of f over samples.
func Median(samples []Sample, f func(Sample) float64) float64 {
	vs := make([]float64, len(samples))
	for i, s := range samples {
		vs[i] = f(s)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}
