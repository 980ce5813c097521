package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/hack/bench/k8sbench"
)

func main() {
	s := k8sbench.CEPFull
	flag.IntVar(&s.Nodes, "nodes", s.Nodes, "nodes hosting the endpoints")
	flag.IntVar(&s.Endpoints, "endpoints", s.Endpoints, "CiliumEndpoints")
	flag.IntVar(&s.Namespaces, "namespaces", s.Namespaces, "namespaces of the endpoints")
	flag.IntVar(&s.Watchers, "watchers", s.Watchers, "simulated nodes reading every endpoint")
	runs := flag.Int("runs", 3, "timed alternating rounds per side (the median is reported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (sides labelled side=apiary|client-go) to this file")
	flag.Parse()
	stopProfile, err := bench.CPUProfile(*cpuprofile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cepbench:", err)
		os.Exit(1)
	}
	defer stopProfile()
	r, err := bench.WithTB(func(tb testing.TB) (k8sbench.CEPResults, error) { return k8sbench.MeasureCEP(tb, s, *runs) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "cepbench:", err)
		stopProfile()
		os.Exit(1)
	}
	report(os.Stdout, r)
}

func report(out io.Writer, r k8sbench.CEPResults) {
	s := r.Size
	fmt.Fprintf(out, "CiliumEndpoints: real kube-apiserver with %d endpoints on %d nodes in %d namespaces, filled in %s;\n"+
		"%d simulated nodes read them all; median of %d alternating rounds, %s %s/%s, %d CPUs\n\n",
		s.Endpoints, s.Nodes, s.Namespaces, r.Fill.Round(time.Millisecond), s.Watchers, r.Runs,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	at, ah := r.Apiary.Median()
	pt, ph := r.Peer.Median()
	ac, pc := r.Apiary.MedianCPU(), r.Peer.MedianCPU()
	fmt.Fprintf(out, "%-52s %12s %12s %12s\n", "side", "all seen", "CPU", "live heap")
	fmt.Fprintf(out, "%-52s %12s %12s %12s\n", "client-go dynamic informer per node -> synced", pt.Round(time.Millisecond), pc.Round(time.Millisecond), mib(ph))
	fmt.Fprintf(out, "%-52s %12s %12s %12s\n", "apiary CEP resource + k8scep -> ipcache, per node", at.Round(time.Millisecond), ac.Round(time.Millisecond), mib(ah))
	fmt.Fprintf(out, "ratio apiary/client-go: time %.2f, CPU %.2f, heap %.2f (goal <= 1.5)\n",
		ratio(float64(at), float64(pt)), ratio(float64(ac), float64(pc)), ratio(float64(ah), float64(ph)))
	// The two sides of a round run back to back, so they share the
	// machine's load more closely than rounds minutes apart do.
	var times, cpus []float64
	for i := range min(len(r.Apiary.Took), len(r.Peer.Took), len(r.Apiary.CPU), len(r.Peer.CPU)) {
		t := ratio(float64(r.Apiary.Took[i]), float64(r.Peer.Took[i]))
		c := ratio(float64(r.Apiary.CPU[i]), float64(r.Peer.CPU[i]))
		times, cpus = append(times, t), append(cpus, c)
		fmt.Fprintf(out, "  round %d: client-go %s, CPU %s; apiary %s, CPU %s; ratio time %.2f, CPU %.2f\n", i+1,
			r.Peer.Took[i].Round(time.Millisecond), r.Peer.CPU[i].Round(time.Millisecond),
			r.Apiary.Took[i].Round(time.Millisecond), r.Apiary.CPU[i].Round(time.Millisecond), t, c)
	}
	if len(times) > 1 {
		fmt.Fprintf(out, "median of the rounds' ratios: time %.2f, CPU %.2f\n", bench.Median(times), bench.Median(cpus))
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
