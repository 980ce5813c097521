package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"text/tabwriter"
	"time"
)

func main() {
	prefixes := flag.Int("prefixes", 100000, "prefix upserts per run")
	runs := flag.Int("runs", 3, "measured runs per workload (the median is reported)")
	flag.Parse()
	if *prefixes < 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "ipcachebench: -prefixes and -runs must be positive")
		os.Exit(1)
	}
	var rows []result
	for _, w := range workloads {
		r, err := measure(w, *prefixes, *runs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ipcachebench:", err)
			os.Exit(1)
		}
		rows = append(rows, r)
	}
	print(rows, *prefixes, *runs)
}

func print(rows []result, prefixes, runs int) {
	fmt.Printf("ipcache: %d prefix upserts through the metadata layer, one listener, median of %d runs, %s %s/%s, GOMAXPROCS=%d\n\n",
		prefixes, runs, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "workload\ttime\tentries/s\tallocs/entry\tbytes/entry")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%.0f\t%.1f\t%.0f\n", r.name, r.took.Round(time.Millisecond),
			float64(prefixes)/r.took.Seconds(), r.allocs, r.bytes)
	}
	w.Flush()
	fmt.Printf("ratio CIDR labels / explicit identities (time): %.2f\n", float64(rows[0].took)/float64(rows[1].took))
}
