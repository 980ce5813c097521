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
)

func main() {
	s := cmbench.Full
	flag.IntVar(&s.Nodes, "nodes", s.Nodes, "remote nodes")
	flag.IntVar(&s.Identities, "identities", s.Identities, "remote identities")
	flag.IntVar(&s.Endpoints, "endpoints", s.Endpoints, "remote ipcache entries")
	runs := flag.Int("runs", 5, "alternating rounds per side (the median is reported)")
	rate := flag.Int("rate", 1000, "steady-state puts per second")
	d := flag.Duration("steady", 5*time.Second, "steady-state duration")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (the embedded etcd included) to this file")
	flag.Parse()
	stopProfile, err := bench.CPUProfile(*cpuprofile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmbench:", err)
		os.Exit(1)
	}
	defer stopProfile()
	r, err := bench.WithTB(func(tb testing.TB) (cmbench.Results, error) { return cmbench.Measure(tb, s, *runs, *rate, *d) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmbench:", err)
		stopProfile()
		os.Exit(1)
	}
	print(r)
}

func print(r cmbench.Results) {
	fmt.Printf("clustermesh: remote %s with %d nodes, %d identities, %d ipcache entries in a real etcd (embedded, filled in %s),\n"+
		"median of %d alternating rounds, %s %s/%s, %d CPUs\n\n",
		cmbench.RemoteName, r.Size.Nodes, r.Size.Identities, r.Size.Endpoints, r.Fill.Round(time.Millisecond),
		r.Runs, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "initial sync\tmedian\tkeys/s\tall rounds")
	fmt.Fprintf(w, "client/v3 paginated Get + decode (3 prefixes concurrently)\t%s\t%.0f\t%v\n",
		r.Peer.Round(time.Millisecond), rate(r.Size.Keys(), r.Peer), rounded(r.PeerAll))
	fmt.Fprintf(w, "apiary remote connect -> ready, all in node manager/ipcache/identities\t%s\t%.0f\t%v\n",
		r.Apiary.Round(time.Millisecond), rate(r.Size.Keys(), r.Apiary), rounded(r.ApiaryAll))
	fmt.Fprintf(w, "  of which until the remote reported ready (every prefix listed)\t%s\t\t%v\n",
		r.ApiaryReady.Round(time.Millisecond), rounded(r.ReadyAll))
	w.Flush()
	fmt.Printf("ratio apiary/raw: %.2f (goal <= 1.5)\n", float64(r.Apiary)/float64(r.Peer))
	fmt.Printf("process CPU time per read (median; the embedded etcd included): raw %s, apiary %s, ratio %.2f\n\n",
		r.PeerCPU.Round(time.Millisecond), r.ApiaryCPU.Round(time.Millisecond), float64(r.ApiaryCPU)/float64(r.PeerCPU))
	fmt.Printf("steady state: %d ipcache puts on the remote at %d/s; put -> local ipcache listener:\n", r.Steady.Puts, r.Rate)
	fmt.Printf("p50 %s, p99 %s, max %s (goal p99 < 50ms)\n",
		r.Steady.P50.Round(10*time.Microsecond), r.Steady.P99.Round(10*time.Microsecond), r.Steady.Max.Round(10*time.Microsecond))
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}
