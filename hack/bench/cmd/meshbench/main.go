// Command meshbench runs Cilium v1.20's KVStoreMesh and an apiary agent
// against the same remote cluster (5,000 nodes, 50,000 identities,
// 100,000 ipcache entries in a real, embedded etcd) in one run, each in
// a process of its own, and prints each side's time to ready and memory
// with the ratios apiary/KVStoreMesh (goals: RSS <= 0.8, time to ready
// <= 1). See package meshbench for what is measured.
//
// Run it with:
//
//	cd hack/bench && go run ./cmd/meshbench [-runs 3] [-settle 2s]
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/hack/bench/cmbench"
	"github.com/apiary-net/apiary/hack/bench/meshbench"
)

func main() {
	o := meshbench.Options{Size: cmbench.Full}
	flag.IntVar(&o.Size.Nodes, "nodes", o.Size.Nodes, "remote nodes")
	flag.IntVar(&o.Size.Identities, "identities", o.Size.Identities, "remote identities")
	flag.IntVar(&o.Size.Endpoints, "endpoints", o.Size.Endpoints, "remote ipcache entries")
	flag.IntVar(&o.Runs, "runs", 3, "runs per side, alternating which goes first (the median is reported)")
	flag.DurationVar(&o.Settle, "settle", 2*time.Second, "idle time between ready and reading the RSS")
	flag.StringVar(&o.Dir, "dir", "", "keep the built sides in this directory (for pprof of a side)")
	flag.StringVar(&o.MemProfile, "memprofile", "", "heap profiles of each side's last run after ready and a GC: <file>.apiary, <file>.kvstoremesh")
	flag.Parse()
	r, err := bench.WithTB(func(tb testing.TB) (meshbench.Results, error) { return meshbench.Measure(tb, o) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshbench:", err)
		os.Exit(1)
	}
	print(r)
}

func print(r meshbench.Results) {
	fmt.Printf("mesh: remote %s with %d nodes, %d identities, %d ipcache entries in a real etcd (embedded, filled in %s),\n"+
		"each side a process of its own, median of %d runs each, RSS read %s after ready, %s %s/%s, %d CPUs\n\n",
		cmbench.RemoteName, r.Size.Nodes, r.Size.Identities, r.Size.Endpoints, r.Fill.Round(time.Millisecond),
		len(r.Apiary), r.Settle, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "side\tready\tVmRSS\tVmHWM\tlive heap\tall runs (ready, RSS)")
	row := func(name string, ss []meshbench.Sample) {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", name, ready(ss).Round(time.Millisecond),
			mb(med(ss, func(s meshbench.Sample) uint64 { return s.RSS })), mb(med(ss, func(s meshbench.Sample) uint64 { return s.HWM })),
			mb(med(ss, func(s meshbench.Sample) uint64 { return s.LiveHeap })), all(ss))
	}
	row("Cilium v1.20 KVStoreMesh (mirrors into its etcd)", r.KVStoreMesh)
	row("apiary agent (remote, node manager, ipcache, identities)", r.Apiary)
	w.Flush()
	rss := func(s meshbench.Sample) uint64 { return s.RSS }
	fmt.Printf("\nratio apiary/KVStoreMesh: RSS %.2f (goal <= 0.8), time to ready %.2f (goal <= 1)\n",
		float64(med(r.Apiary, rss))/float64(med(r.KVStoreMesh, rss)), float64(ready(r.Apiary))/float64(ready(r.KVStoreMesh)))
}

func med(ss []meshbench.Sample, f func(meshbench.Sample) uint64) uint64 {
	return uint64(meshbench.Median(ss, func(s meshbench.Sample) float64 { return float64(f(s)) }))
}

func ready(ss []meshbench.Sample) time.Duration {
	return time.Duration(meshbench.Median(ss, func(s meshbench.Sample) float64 { return float64(s.Ready) }))
}

func mb(b uint64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }

func all(ss []meshbench.Sample) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("(%s, %s)", s.Ready.Round(time.Millisecond), mb(s.RSS))
	}
	return out
}
