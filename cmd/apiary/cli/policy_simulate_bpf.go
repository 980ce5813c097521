package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/datapath/bpfsim"
	"github.com/apiary-net/apiary/policy/simulate"
)

// Values of `apiary policy simulate --datapath`.
const (
	datapathEngine = "engine"
	datapathBPF    = "bpf"
)

// simulateDatapath is the --datapath flag: which datapath decides the
// verdicts.
type simulateDatapath string

var _ pflag.Value = (*simulateDatapath)(nil)

func (d *simulateDatapath) String() string { return string(*d) }

func (d *simulateDatapath) Type() string { return "string" }

// Set accepts engine or bpf.
func (d *simulateDatapath) Set(s string) error {
	switch s {
	case datapathEngine, datapathBPF:
		*d = simulateDatapath(s)
		return nil
	}
	return fmt.Errorf("%q is not %s or %s", s, datapathEngine, datapathBPF)
}

// runSimulateBPF answers sim's queries with the endpoint programs in the
// kernel (package datapath/bpfsim). It runs past the CLI's request
// timeout (it talks to no agent) but stops on SIGINT or SIGTERM between
// two queries, so that its private bpffs is always unmounted.
func runSimulateBPF(ctx context.Context, sim *simulate.Simulation, explain bool, stderr io.Writer) ([]simulate.Result, error) {
	ctx, stop := signal.NotifyContext(context.WithoutCancel(ctx), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, err := bpfsim.New(log, sim.Model())
	if err != nil {
		return nil, fmt.Errorf("simulate with --datapath=bpf: %w", err)
	}
	results, err := d.Run(ctx, explain)
	if cerr := d.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("simulate with --datapath=bpf: %w", err)
	}
	return results, nil
}
