package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/hack/bench/graph"
)

func main() {
	n := flag.Int("n", 50, "measured iterations per framework")
	warmup := flag.Int("warmup", 5, "untimed iterations per framework before measuring")
	flag.Parse()
	if err := run(os.Stdout, *n, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "hivebench:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, n, warmup int) error {
	if n < 1 || warmup < 0 {
		return fmt.Errorf("-n %d -warmup %d: want n >= 1 and warmup >= 0", n, warmup)
	}
	fws := bench.Frameworks
	ctx := context.Background()
	for range warmup {
		for _, fw := range fws {
			if err := fw.Run(ctx); err != nil {
				return fmt.Errorf("warm-up %s: %w", fw.Name, err)
			}
		}
	}
	samples := make([][]time.Duration, len(fws))
	for i := range n {
		// Rotate which framework goes first, so that none always pays
		// for the garbage the others left behind.
		for j := range fws {
			k := (i + j) % len(fws)
			d, err := timeRun(ctx, fws[k])
			if err != nil {
				return err
			}
			samples[k] = append(samples[k], d)
		}
	}
	return report(w, n, warmup, fws, samples)
}

func timeRun(ctx context.Context, fw bench.Framework) (time.Duration, error) {
	begin := time.Now()
	if err := fw.Run(ctx); err != nil {
		return 0, fmt.Errorf("%s: %w", fw.Name, err)
	}
	return time.Since(begin), nil
}

func report(w io.Writer, n, warmup int, fws []bench.Framework, samples [][]time.Duration) error {
	fmt.Fprintf(w, "populate+start+stop of %d cells, %d iterations after %d warm-ups, %s %s/%s\n\n",
		graph.N, n, warmup, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "%-12s %12s %12s\n", "framework", "median", "p90")
	medians := make([]time.Duration, len(fws))
	for i, fw := range fws {
		s := summarize(samples[i])
		medians[i] = s.median
		fmt.Fprintf(w, "%-12s %12s %12s\n", fw.Name, ms(s.median), ms(s.p90))
	}
	fmt.Fprintln(w)
	ours, fastest := medians[0], medians[1]
	for i := 1; i < len(fws); i++ {
		fmt.Fprintf(w, "ratio %s/%s: %.2f\n", fws[0].Name, fws[i].Name, float64(ours)/float64(medians[i]))
		fastest = min(fastest, medians[i])
	}
	_, err := fmt.Fprintf(w, "ratio %s/min(peers): %.2f (goal <= 0.5)\n", fws[0].Name, float64(ours)/float64(fastest))
	return err
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}
