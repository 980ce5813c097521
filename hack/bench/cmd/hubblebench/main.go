package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
)

func main() {
	rate := flag.Int("rate", 100000, "events per second written by the programs")
	d := flag.Duration("duration", 3*time.Second, "how long events are written")
	capacity := flag.Int("capacity", 65535, "--hubble-event-buffer-capacity")
	flag.Parse()
	if *rate < 100 || *d <= 0 {
		fmt.Fprintln(os.Stderr, "hubblebench: -rate must be at least 100 and -duration positive")
		os.Exit(1)
	}
	r, err := bench.WithTB(func(tb testing.TB) (result, error) { return measure(tb, *rate, *d, *capacity) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "hubblebench:", err)
		os.Exit(1)
	}
	fmt.Printf("hubble: drop events from the endpoint program (BPF_PROG_TEST_RUN) at %d/s for %s -> monitor reader -> hubble flows, %s %s/%s, %d CPUs\n\n",
		*rate, *d, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("events sent:                        %d (%.0f/s achieved)\n", r.sent, float64(r.sent)/r.elapsed.Seconds())
	fmt.Printf("read off the ring buffer:           %d\n", r.read)
	fmt.Printf("lost in the kernel ring buffer:     %d (%.2f%%)\n", r.sent-r.read, pct(r.sent-r.read, r.sent))
	fmt.Printf("lost in the observer's queue:       %d (reported to clients as LostEvent OBSERVER_EVENTS_QUEUE)\n", r.read-r.flows)
	fmt.Printf("flows (hubble seen_flows):          %d\n", r.flows)
	fmt.Printf("agent CPU per 10k flows:            %s (agent CPU %s over %s, the generator's thread excluded)\n",
		r.perTenK().Round(time.Microsecond), r.agentCPU.Round(time.Millisecond), r.elapsed.Round(time.Millisecond))
}

func pct(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
