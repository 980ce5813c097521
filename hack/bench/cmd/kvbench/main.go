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
	keys := flag.Int("keys", 100000, "number of keys")
	runs := flag.Int("runs", 3, "measured runs per side (the median is reported)")
	flag.Parse()
	res, err := bench.WithTB(func(tb testing.TB) (results, error) { return measure(tb, *keys, *runs) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "kvbench:", err)
		os.Exit(1)
	}
	print(res, *keys, *runs)
}

type results struct {
	plainRead, watchRead     time.Duration
	rawWrite, syncStoreWrite time.Duration
}

func print(r results, keys, runs int) {
	fmt.Printf("kvstore: %d keys of ~200-byte JSON in a real etcd (embedded), median of %d runs, %s %s/%s\n\n",
		keys, runs, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "read path\ttime\tkeys/s")
	fmt.Fprintf(w, "client/v3 paginated Get + json.Unmarshal\t%s\t%.0f\n", r.plainRead.Round(time.Millisecond), rate(keys, r.plainRead))
	fmt.Fprintf(w, "WatchStore until Synced (decoded)\t%s\t%.0f\n", r.watchRead.Round(time.Millisecond), rate(keys, r.watchRead))
	w.Flush()
	fmt.Printf("ratio WatchStore/plain: %.2f (goal <= 1.3)\n\n", float64(r.watchRead)/float64(r.plainRead))
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "write path\ttime\tkeys/s")
	fmt.Fprintf(w, "raw client/v3 txns (126 puts, one lease, 32 in flight)\t%s\t%.0f\n", r.rawWrite.Round(time.Millisecond), rate(keys, r.rawWrite))
	fmt.Fprintf(w, "SyncStore upserts until canary\t%s\t%.0f\n", r.syncStoreWrite.Round(time.Millisecond), rate(keys, r.syncStoreWrite))
	w.Flush()
	fmt.Printf("ratio SyncStore/raw (time): %.2f (same transaction size and lease on both sides)\n", float64(r.syncStoreWrite)/float64(r.rawWrite))
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
