package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitDiffers is the exit status when a verdict differs from simulate's.
const exitDiffers = 3

// options are the flags of a lab run.
type options struct {
	binDir, etcd string
	keep         bool
	restart      bool
	bench        bool
	routingMode  string // the agents' --routing-mode
	// globalServices runs the global service walk-through after the
	// queries (with two clusters or more).
	globalServices bool
}

// run dispatches the subcommands and runs a lab; it returns the exit
// status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		var err error
		switch args[0] {
		case "serve":
			err = serve(args[1:])
		case "nsexec":
			err = nsexec(args[1:])
		case "etcd":
			err = etcdServer(args[1:], stderr)
		case "down":
			err = sweep(stdout)
		default:
			return runLab(args, stdout, stderr)
		}
		if err != nil {
			fmt.Fprintln(stderr, oneLine(err))
			return 1
		}
		return 0
	}
	return runLab(args, stdout, stderr)
}

// runLab parses the flags and the scenario, then builds and runs the lab.
func runLab(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	self, _ := os.Executable()
	fs.StringVar(&o.binDir, "bin-dir", filepath.Dir(self), "directory of apiary-agent and apiary")
	fs.StringVar(&o.etcd, "etcd", "", "etcd server binary (make etcd); empty: the etcd built into this program (demo etcd)")
	fs.BoolVar(&o.keep, "keep", os.Getenv("KEEP") == "1", "leave the lab up (KEEP=1); `demo down` removes it")
	fs.BoolVar(&o.bench, "bench", false, "after the queries, kill another cluster's etcd, start it again and time until the mesh and the cross-cluster verdicts are right")
	fs.StringVar(&o.routingMode, "routing-mode", "native", "the agents' --routing-mode: native (routes to the other nodes' pod CIDRs, --auto-direct-node-routes) or tunnel (VXLAN between the nodes)")
	fs.BoolVar(&o.globalServices, "global-services", true, "after the queries, the seed's global service walk-through (rebel-base in the first two clusters, an x-wing calling it through the BPF load balancer), when the scenario has two clusters or more")
	fs.BoolVar(&o.restart, "restart-round", false, "after the queries, stop and start the agent of a pod with an open connection and check again")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: demo [flags] <scenario.yaml> | demo down")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.routingMode != "native" && o.routingMode != "tunnel" {
		fmt.Fprintf(stderr, "demo: --routing-mode %q is not one of native, tunnel\n", o.routingMode)
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	file := fs.Arg(0)
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(stderr, oneLine(fmt.Errorf("read scenario: %w", err)))
		return 1
	}
	p, err := newPlan(file, data)
	if err != nil {
		fmt.Fprintln(stderr, oneLine(err))
		return 1
	}
	bins, err := findBinaries(o)
	if err != nil {
		fmt.Fprintln(stderr, oneLine(err))
		return 1
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(stderr, "demo: the lab needs root (network namespaces, BPF, bpffs pins)")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	code, err := runPlan(ctx, p, bins, o, stdout)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "demo: interrupted; the lab is removed")
	case err != nil:
		fmt.Fprintln(stderr, "demo: "+err.Error())
	}
	return code
}

// lockPath is the lock one lab run at a time holds: the lab's names are
// fixed, and a run sweeps what it finds.
const lockPath = "/run/apiary-lab.lock"

// lockLab takes the lab lock, waiting for a run in progress to end.
func lockLab(out io.Writer) (func(), error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", lockPath, err)
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		fmt.Fprintf(out, "Another lab run holds %s; waiting for it\n", lockPath)
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", lockPath, err)
		}
	}
	return func() { f.Close() }, nil
}

// findBinaries checks that the programs the lab runs exist. Without
// --etcd the etcds are this program's `demo etcd`.
func findBinaries(o options) (binaries, error) {
	b := binaries{agent: filepath.Join(o.binDir, "apiary-agent"), cli: filepath.Join(o.binDir, "apiary")}
	var errs []error
	check := []string{b.agent, b.cli}
	if o.etcd != "" {
		check = append(check, o.etcd)
		abs, err := filepath.Abs(o.etcd)
		if err != nil {
			abs = o.etcd
		}
		b.etcd = []string{abs}
	} else {
		self, err := os.Executable()
		if err != nil {
			errs = append(errs, fmt.Errorf("find the demo executable: %w", err))
		}
		b.etcd = []string{self, "etcd"}
	}
	for _, p := range check {
		if _, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w (make build)", p, err))
		}
	}
	return b, errors.Join(errs...)
}

// runPlan sweeps leftovers, builds the lab, runs the queries and removes
// the lab (unless kept). It returns 0 when every verdict agrees with
// simulate, exitDiffers when one differs, 1 when the lab failed.
func runPlan(ctx context.Context, p *plan, bins binaries, o options, out io.Writer) (int, error) {
	unlock, err := lockLab(out)
	if err != nil {
		return 1, err
	}
	defer unlock()
	if err := sweep(out); err != nil {
		return 1, err
	}
	l := newLab(p, bins, out)
	l.routingMode = o.routingMode
	keep := o.keep
	defer func() {
		for _, c := range l.client {
			c.Close()
		}
		if keep && ctx.Err() == nil {
			l.printKeep()
			return
		}
		start := time.Now()
		if err := sweep(nil); err != nil {
			fmt.Fprintln(os.Stderr, "demo: "+err.Error())
		}
		fmt.Fprintf(out, "Lab removed in %s\n", time.Since(start).Round(100*time.Millisecond))
	}()
	start := time.Now()
	fmt.Fprintf(out, "Lab for %s\n%s", p.file, p.describe())
	if err := l.up(ctx); err != nil {
		keep = false
		return 1, err
	}
	fmt.Fprintf(out, "Lab up in %s\n\n", time.Since(start).Round(100*time.Millisecond))
	mctx, cancel := context.WithCancel(ctx)
	mons := l.watch(mctx)
	defer func() { cancel(); mons.wg.Wait() }()
	l.view(ctx)
	diffs := l.runQueries(mons)
	if o.globalServices && len(p.clusters) > 1 && ctx.Err() == nil {
		if err := l.globalServices(ctx); err != nil {
			diffs = append(diffs, "global services: "+oneLine(err))
		}
	}
	if o.restart && ctx.Err() == nil {
		if err := l.restartRound(ctx); err != nil {
			diffs = append(diffs, "restart round: "+err.Error())
		}
	}
	if o.bench && ctx.Err() == nil {
		if err := l.etcdRound(ctx); err != nil {
			diffs = append(diffs, "bench: "+err.Error())
		}
	}
	if ctx.Err() != nil {
		return 1, ctx.Err()
	}
	fmt.Fprintln(out)
	if len(diffs) > 0 {
		fmt.Fprintf(out, "%d of %d verdicts differ from apiary policy simulate:\n  %s\n", len(diffs), len(p.queries), strings.Join(diffs, "\n  "))
		return exitDiffers, nil
	}
	fmt.Fprintf(out, "All %d verdicts agree with apiary policy simulate -f %s\n", len(p.queries), p.file)
	return 0, nil
}

// oneLine joins the lines of an error message with "; ", as the apiary
// CLI prints errors.
func oneLine(err error) string {
	return strings.Join(strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' }), "; ")
}
