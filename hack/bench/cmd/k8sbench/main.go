package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/hack/bench/k8sbench"
)

func main() {
	s := k8sbench.Full
	flag.IntVar(&s.Pods, "pods", s.Pods, "pods in the cluster")
	flag.IntVar(&s.LocalPods, "local-pods", s.LocalPods, "pods of them on this node (the ones the agent lists)")
	flag.IntVar(&s.Namespaces, "namespaces", s.Namespaces, "namespaces")
	flag.IntVar(&s.Nodes, "nodes", s.Nodes, "nodes")
	flag.IntVar(&s.Policies, "policies", s.Policies, "policies (1/2 NP, 4/10 CNP, 1/10 CCNP)")
	runs := flag.Int("runs", 5, "timed alternating rounds per side (the median is reported)")
	warmup := flag.Int("warmup", 1, "untimed rounds per side first")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (fill and the embedded etcd included) to this file")
	flag.Parse()
	stopProfile, err := bench.CPUProfile(*cpuprofile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8sbench:", err)
		os.Exit(1)
	}
	defer stopProfile()
	r, err := bench.WithTB(func(tb testing.TB) (k8sbench.Results, error) { return k8sbench.Measure(tb, s, *runs, *warmup) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8sbench:", err)
		stopProfile()
		os.Exit(1)
	}
	report(os.Stdout, r)
}

func report(out io.Writer, r k8sbench.Results) {
	s := r.Size
	nps, cnps, ccnps := s.Kinds()
	fmt.Fprintf(out, "kubernetes initial sync: real kube-apiserver with %d pods (%d on this node), %d namespaces, %d nodes,\n"+
		"%d policies (%d NP, %d CNP, %d CCNP), filled in %s; median of %d alternating rounds after %d warm-up,\n%s %s/%s, %d CPUs\n\n",
		s.Pods, s.LocalPods, s.Namespaces, s.Nodes, s.Policies, nps, cnps, ccnps, r.Fill.Round(time.Millisecond),
		r.Runs, r.Warmup, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	at, ah := r.Apiary.Median()
	pt, ph := r.Peer.Median()
	w := tabwriter.NewWriter(out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "side\tsync (median)\tlive heap (median)\tall rounds")
	fmt.Fprintf(w, "client-go shared informers -> HasSynced\t%s\t%s\t%v\n", pt.Round(time.Millisecond), mib(ph), rounded(r.Peer.Took))
	fmt.Fprintf(w, "apiary k8s cells + watchers -> CacheSync gate\t%s\t%s\t%v\n", at.Round(time.Millisecond), mib(ah), rounded(r.Apiary.Took))
	w.Flush()
	ac, pc := r.Apiary.MedianCPU(), r.Peer.MedianCPU()
	fmt.Fprintf(out, "process CPU time per round (median; the whole round: sync, heap GCs, check, stop; the in-process etcd included): client-go %s, apiary %s, ratio %.2f\n",
		pc.Round(time.Millisecond), ac.Round(time.Millisecond), ratio(float64(ac), float64(pc)))
	fmt.Fprintln(out, "apiary, when each cache of the gate synced (median over rounds):")
	for _, name := range cacheNames(r.Apiary.Synced) {
		var ds []time.Duration
		for _, m := range r.Apiary.Synced {
			ds = append(ds, m[name])
		}
		slices.Sort(ds)
		fmt.Fprintf(out, "  %-45s %s\n", name, ds[len(ds)/2].Round(time.Millisecond))
	}
	fmt.Fprintf(out, "ratio apiary/client-go: time %.2f (goal <= 1.5), heap %.2f\n", ratio(float64(at), float64(pt)), ratio(float64(ah), float64(ph)))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

func cacheNames(rounds []map[string]time.Duration) []string {
	var names []string
	for _, m := range rounds {
		for name := range m {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}
