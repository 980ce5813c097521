package bpfsim_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath/bpfsim"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/policy/simulate"
)

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// runBoth answers sim's queries with the engine and with the kernel,
// both with explanations. It skips t where BPF is unavailable.
func runBoth(t *testing.T, sim *simulate.Simulation) (engine, kernel []simulate.Result) {
	t.Helper()
	bpfmaptest.RequireBPF(t)
	d, err := bpfsim.New(testLogger(), sim.Model())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	kernel, err = d.Run(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	return sim.RunExplain(), kernel
}

// differences returns one line per query whose verdict, or the verdict
// of one of its directions, differs between the engine and the kernel.
func differences(engine, kernel []simulate.Result) []string {
	var out []string
	if len(engine) != len(kernel) {
		return []string{"different numbers of results"}
	}
	for i, e := range engine {
		k := kernel[i]
		if e.Verdict != k.Verdict || e.Egress.Verdict != k.Egress.Verdict || e.Ingress.Verdict != k.Ingress.Verdict {
			out = append(out, strings.Join([]string{
				e.String(), "  engine egress:  " + e.Egress.String(), "  engine ingress: " + e.Ingress.String(),
				"  kernel egress:  " + k.Egress.String(), "  kernel ingress: " + k.Ingress.String(),
			}, "\n"))
		}
	}
	return out
}
