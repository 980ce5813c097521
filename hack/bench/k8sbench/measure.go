package k8sbench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/hack/bench"
)

// Side is one side's rounds.
type Side struct {
	// Took is the time from the start until every cache synced.
	Took []time.Duration
	// Heap is the live heap (after a GC) with the side synced, less the
	// live heap before it started.
	Heap []int64
	// CPU is the process's CPU time (user+system, the embedded etcd's
	// included, the kube-apiserver's not) during each whole round (sync,
	// heap measurement, check, stop): less sensitive than wall time to
	// other load on the machine.
	CPU []time.Duration
	// Synced is, for the agent, when each cache of the gate synced in
	// each round.
	Synced []map[string]time.Duration
}

// Median returns the median time and heap.
func (s Side) Median() (time.Duration, int64) { return bench.Median(s.Took), bench.Median(s.Heap) }

// MedianCPU returns the median CPU time.
func (s Side) MedianCPU() time.Duration { return bench.Median(s.CPU) }

// Results are one run.
type Results struct {
	Size         Size
	Runs, Warmup int
	Fill         time.Duration
	Apiary, Peer Side
}

// Measure starts a kube-apiserver (k8stest, with its etcd embedded in
// this process), installs the CRDs, fills it with s, then runs warmup
// untimed and runs timed rounds of each side, alternating which goes
// first.
func Measure(tb testing.TB, s Size, runs, warmup int) (Results, error) {
	r := Results{Size: s, Runs: runs, Warmup: warmup}
	if err := s.Validate(); err != nil {
		return r, err
	}
	if runs < 1 || warmup < 0 {
		return r, fmt.Errorf("runs %d, warmup %d: want runs >= 1, warmup >= 0", runs, warmup)
	}
	srv := k8stest.Start(tb)
	srv.InstallCRDs()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	begin := time.Now()
	if err := Fill(ctx, srv.Clientset(), srv.Dynamic(), s); err != nil {
		return r, fmt.Errorf("fill: %w", err)
	}
	r.Fill = time.Since(begin)
	kubeconfig := srv.WriteKubeconfig(k8stest.AdminToken)
	sides := []func(record bool) error{
		func(record bool) error {
			cpu0 := bench.ProcessCPU()
			var (
				d      time.Duration
				heap   int64
				synced map[string]time.Duration
				err    error
			)
			// Labelled for -cpuprofile: the goroutines the side starts
			// inherit the label.
			pprof.Do(ctx, pprof.Labels("side", "apiary"), func(ctx context.Context) {
				d, heap, synced, err = apiaryRound(ctx, tb, kubeconfig, s)
			})
			if record {
				r.Apiary.CPU = append(r.Apiary.CPU, bench.ProcessCPU()-cpu0)
				r.Apiary.Took, r.Apiary.Heap = append(r.Apiary.Took, d), append(r.Apiary.Heap, heap)
				r.Apiary.Synced = append(r.Apiary.Synced, synced)
			}
			return err
		},
		func(record bool) error {
			cpu0 := bench.ProcessCPU()
			var (
				d    time.Duration
				heap int64
				err  error
			)
			pprof.Do(ctx, pprof.Labels("side", "client-go"), func(ctx context.Context) {
				d, heap, err = peerRound(ctx, kubeconfig, s)
			})
			if record {
				r.Peer.CPU = append(r.Peer.CPU, bench.ProcessCPU()-cpu0)
				r.Peer.Took, r.Peer.Heap = append(r.Peer.Took, d), append(r.Peer.Heap, heap)
			}
			return err
		},
	}
	for i := range warmup + runs {
		order := slices.Clone(sides)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, side := range order {
			if err := side(i >= warmup); err != nil {
				return r, fmt.Errorf("round %d: %w", i+1, err)
			}
			settleHeap()
		}
	}
	return r, nil
}

// apiaryRound times the agent's hive from populate to the cache-sync
// gate opening, measures its heap, checks its caches and stops it.
func apiaryRound(ctx context.Context, tb testing.TB, kubeconfig string, s Size) (time.Duration, int64, map[string]time.Duration, error) {
	dir, err := os.MkdirTemp(tb.TempDir(), "agent")
	if err != nil {
		return 0, 0, nil, fmt.Errorf("create the agent's directory: %w", err)
	}
	a, err := newApiaryAgent(kubeconfig, dir)
	if err != nil {
		return 0, 0, nil, err
	}
	base := liveHeap()
	begin := time.Now()
	err = a.start(ctx, begin)
	took := time.Since(begin)
	if err != nil {
		_ = a.stop()
		return 0, 0, nil, err
	}
	heap := liveHeap() - base
	err = a.check(ctx, s)
	if stopErr := a.stop(); err == nil {
		err = stopErr
	}
	return took, heap, a.synced, err
}

// peerRound times client-go from building its clients to every informer
// synced, measures its heap, checks its stores and shuts it down.
func peerRound(ctx context.Context, kubeconfig string, s Size) (time.Duration, int64, error) {
	base := liveHeap()
	begin := time.Now()
	p, err := startPeer(ctx, kubeconfig)
	took := time.Since(begin)
	if err != nil {
		return 0, 0, err
	}
	heap := liveHeap() - base
	err = p.check(s)
	p.shutdown()
	return took, heap, err
}

// settleHeap waits (up to 5s) until a stopped side's goroutines have
// let go of its heap: the live heap no longer shrinks by 1 MiB in 100ms.
// Otherwise the next side's baseline holds the last side's caches.
func settleHeap() {
	last := liveHeap()
	for range 50 {
		time.Sleep(100 * time.Millisecond)
		now := liveHeap()
		if last-now < 1<<20 {
			return
		}
		last = now
	}
}

// liveHeap returns the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
