package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
)

// goal is the issue's: the control plane at most 1.5x the raw writes.
const goal = 1.5

func main() {
	services := flag.Int("services", 10000, "Kubernetes Services")
	backends := flag.Int("backends", 10, "endpoints per Service (at most 62)")
	changes := flag.Int("changes", 2000, "EndpointSlice changes per round (a backend added, then removed)")
	rounds := flag.Int("rounds", 5, "rounds (the median is reported)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memprofile := flag.String("memprofile", "", "write a profile of the run's allocations to this file (go tool pprof -sample_index=alloc_space)")
	layers := flag.Bool("layers", false, "also time the change's two halves: the watcher, converter and manager (a writer that writes nothing), and the lbmap writer alone")
	flag.Parse()
	if *services < 1 || *services > 1<<16 || *backends < 1 || *backends > 62 || *changes < 2 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "svcbench: -services 1..65536, -backends 1..62, -changes >= 2 and -rounds >= 1")
		os.Exit(1)
	}
	stop, err := bench.CPUProfile(*profile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "svcbench:", err)
		os.Exit(1)
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	res, err := measure(*services, *backends, *changes, *rounds, *layers)
	stop()
	if err == nil && *memprofile != "" {
		err = writeAllocs(*memprofile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "svcbench:", err)
		os.Exit(1)
	}
	fmt.Printf("services: the informers' Service and EndpointSlice events -> k8ssvc.Watcher -> svcmanager (Converter, Upsert, Reconcile) -> lbmap writer -> pinned BPF maps,\n"+
		"against raw cilium/ebpf writes of the same entries; median of %d rounds (both sides alternating), %s, GOMAXPROCS=%d\n\n",
		*rounds, runtime.GOARCH, runtime.GOMAXPROCS(0))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "workload\tapiary wall / CPU\traw wall / CPU\tratio wall / CPU (goal)\tratio CPU, all rounds")
	row(w, fmt.Sprintf("initial sync: %d services x %d backends", *services, *backends), res.sync, 1, "")
	row(w, fmt.Sprintf("EndpointSlice change: 1 backend added or removed (%d changes)", *changes), res.change, *changes, "/change")
	if *layers {
		raw := res.change[1]
		rowGoal(w, "  its watcher, converter and manager (a writer that writes nothing), to raw", [2][]sample{res.layers[0], raw}, *changes, "/change", "")
		rowGoal(w, "  its lbmap writer alone (the manager's list precomputed), to raw", [2][]sample{res.layers[1], raw}, *changes, "/change", "")
	}
	w.Flush()
}

// writeAllocs writes the allocations profile to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("memprofile: %w", err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		return fmt.Errorf("memprofile: %w", err)
	}
	return nil
}

// row prints one workload: medians divided by per (time per change);
// the goal's column is the goal, or empty for a part of one.
func row(w *tabwriter.Writer, name string, s [2][]sample, per int, unit string) {
	rowGoal(w, name, s, per, unit, fmt.Sprintf(" (<= %.1fx)", goal))
}

func rowGoal(w *tabwriter.Writer, name string, s [2][]sample, per int, unit, goalText string) {
	ours, raw := median(s[0]), median(s[1])
	d := func(x time.Duration) string {
		return (x / time.Duration(per)).Round(time.Microsecond/10).String() + unit
	}
	var ratios []float64
	for i := range s[0] {
		ratios = append(ratios, s[0][i].cpu.Seconds()/s[1][i].cpu.Seconds())
	}
	slices.Sort(ratios)
	fmt.Fprintf(w, "%s\t%s / %s\t%s / %s\t%.2fx / %.2fx%s\t%.2f-%.2fx\n", name, d(ours.wall), d(ours.cpu), d(raw.wall), d(raw.cpu),
		ours.wall.Seconds()/raw.wall.Seconds(), ours.cpu.Seconds()/raw.cpu.Seconds(), goalText, ratios[0], ratios[len(ratios)-1])
}
