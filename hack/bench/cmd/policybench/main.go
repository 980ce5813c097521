package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/hack/bench/policyload"
)

var sideNames = [2]string{"apiary", "cilium"}

func main() {
	testing.Init()
	rounds := flag.Int("rounds", 5, "rounds; the table shows the median")
	benchtime := flag.Duration("benchtime", 200*time.Millisecond, "target time of each step's testing.Benchmark")
	flag.Parse()
	if err := run(os.Stdout, *rounds, *benchtime); err != nil {
		fmt.Fprintln(os.Stderr, "policybench:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, rounds int, benchtime time.Duration) error {
	if rounds < 1 || benchtime <= 0 {
		return fmt.Errorf("-rounds %d -benchtime %s: want both positive", rounds, benchtime)
	}
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		return err
	}
	a, err := newApiarySide()
	if err != nil {
		return err
	}
	c, err := newCiliumSide()
	if err != nil {
		return err
	}
	r, err := measure([2]side{a, c}, rounds)
	if err != nil {
		return err
	}
	return report(w, r, rounds)
}

func report(w io.Writer, r *results, rounds int) error {
	fmt.Fprintf(w, "policy engines, apiary vs Cilium v1.20 in one process: %d identities, %d CNPs, %d apps; median of %d rounds, %s %s/%s, GOMAXPROCS=%d\n\n",
		policyload.Identities, policyload.Policies, policyload.Apps, rounds,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tapiary\tcilium\tapiary/cilium\t")
	for i, st := range steps {
		a, c := bench.Median(r.steps[i][0]), bench.Median(r.steps[i][1])
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t\n", st.name, duration(a), duration(c), a/c)
	}
	for i, n := range heapRows {
		a, c := bench.Median(r.heap[i][0]), bench.Median(r.heap[i][1])
		fmt.Fprintf(tw, "live heap after setup, %d endpoint(s)\t%.1f MiB\t%.1f MiB\t%.2f\t\n", n, a/(1<<20), c/(1<<20), a/c)
	}
	return tw.Flush()
}

// duration formats ns with three significant digits.
func duration(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}
