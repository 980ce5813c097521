package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"text/tabwriter"
)

func main() {
	runs := flag.Int("runs", 20000, "single runs per program for the new-flow case")
	repeat := flag.Int("repeat", 1000000, "packets per run for the established case")
	rounds := flag.Int("rounds", 5, "rounds of both cases, alternating the programs (the median round is reported)")
	verdicts := flag.Bool("verdict-events", false, "time apiary as with a monitor client listening: allowed new flows write a policy-verdict event")
	observer := flag.String("trace-events", "off", "time apiary as with a Hubble observer listening: off, medium (new flows and TCP SYN/FIN/RST traced) or none (every forwarded packet traced)")
	flag.Parse()
	if *runs < 1 || *repeat < 1 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "bpfbench: -runs, -repeat and -rounds must be positive")
		os.Exit(1)
	}
	traceFlags, ok := traceLevels[*observer]
	if !ok {
		fmt.Fprintln(os.Stderr, "bpfbench: -trace-events must be off, medium or none")
		os.Exit(1)
	}
	res, err := measure(*rounds, *runs, *repeat, *verdicts, traceFlags)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bpfbench:", err)
		os.Exit(1)
	}
	fmt.Printf("datapath: from_container vs floor (parse + 1 LPM + 1 hash lookup) and Cilium's cil_from_container, BPF_PROG_TEST_RUN, %s, GOMAXPROCS=%d\n",
		runtime.GOARCH, runtime.GOMAXPROCS(0))
	fmt.Printf("new flow: median of %d single runs with conntrack emptied; established: %d packets in one run; median of %d rounds; verdict events (monitor listening): %v; trace events (Hubble listening, --monitor-aggregation): %s\n\n", *runs, *repeat, *rounds, *verdicts, *observer)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "case\tapiary ns/pkt\tfloor ns/pkt\tcilium ns/pkt\tapiary/floor (goal)\tapiary/cilium (goal)")
	for _, r := range res {
		if r.floor == 0 { // single-run rows without a floor (revision bump, ClusterIP)
			fmt.Fprintf(w, "%s\t%.1f\t-\t%.1f\t-\t%.2fx (< 1x)\n", r.name, r.ours, r.cilium, r.ours/r.cilium)
			continue
		}
		fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.1f\t%.2fx (<= %.1fx)\t%.2fx (< 1x)\n",
			r.name, r.ours, r.floor, r.cilium, r.ours/r.floor, r.goal, r.ours/r.cilium)
	}
	w.Flush()
}
