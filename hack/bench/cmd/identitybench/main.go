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
)

func main() {
	sets := flag.Int("sets", 10000, "number of distinct label sets")
	workers := flag.Int("workers", 32, "concurrent allocations (endpoints created at once)")
	flag.Parse()
	res, err := bench.WithTB(func(tb testing.TB) (results, error) { return measure(tb, *sets, *workers) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "identitybench:", err)
		os.Exit(1)
	}
	print(res, *sets, *workers)
}

type results struct {
	rawCreate, alloc, reused time.Duration
}

func print(r results, sets, workers int) {
	fmt.Printf("identity: %d distinct label sets, %d concurrent allocations, real etcd (embedded), %s %s/%s\n\n",
		sets, workers, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "path\ttime\tids/s")
	fmt.Fprintf(w, "raw kvstore CreateOnly (one write per id)\t%s\t%.0f\n", r.rawCreate.Round(time.Millisecond), rate(sets, r.rawCreate))
	fmt.Fprintf(w, "AllocateIdentity, new identities\t%s\t%.0f\n", r.alloc.Round(time.Millisecond), rate(sets, r.alloc))
	fmt.Fprintf(w, "AllocateIdentity on a 2nd agent, existing identities\t%s\t%.0f\n", r.reused.Round(time.Millisecond), rate(sets, r.reused))
	w.Flush()
	fmt.Printf("ratio new-identity allocation / raw CreateOnly (time): %.2f\n", float64(r.alloc)/float64(r.rawCreate))
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
