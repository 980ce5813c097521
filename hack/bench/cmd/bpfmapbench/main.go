package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"text/tabwriter"
)

func main() {
	prefixes := flag.Int("prefixes", 100000, "ipcache prefixes per run")
	keys := flag.Int("keys", 10000, "policy map-state keys")
	services := flag.Int("services", 10000, "services of the load-balancing rows (the maps are sized for them, as with --bpf-lb-map-max)")
	backends := flag.Int("backends", 10, "backends per service")
	rounds := flag.Int("rounds", 5, "rounds (the median is reported)")
	flag.Parse()
	if *prefixes < 1 || *keys < 1 || *rounds < 1 || *services < 1 || *backends < 1 {
		fmt.Fprintln(os.Stderr, "bpfmapbench: -prefixes, -keys, -services, -backends and -rounds must be positive")
		os.Exit(1)
	}
	rows, err := measure(*prefixes, *keys, *services, *backends, *rounds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bpfmapbench:", err)
		os.Exit(1)
	}
	fmt.Printf("BPF map writers vs raw map updates, median of %d rounds, %s, GOMAXPROCS=%d\n\n", *rounds, runtime.GOARCH, runtime.GOMAXPROCS(0))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "workload\tapiary\traw\tratio (apiary speed / raw)\tgoal")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%.2fx\t%s\n", r.name, r.fmt(r.ours), r.fmt(r.raw), r.raw.Seconds()/r.ours.Seconds(), r.goal)
	}
	w.Flush()
}
