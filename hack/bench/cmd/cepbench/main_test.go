package main

import (
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/hack/bench/k8sbench"
)

// TestReport checks that the ratios divide apiary's medians by the
// peer's.
func TestReport(t *testing.T) {
	r := k8sbench.CEPResults{Size: k8sbench.CEPFull, Runs: 1,
		Apiary: k8sbench.Side{Took: []time.Duration{3 * time.Second}, Heap: []int64{30}, CPU: []time.Duration{6 * time.Second}},
		Peer:   k8sbench.Side{Took: []time.Duration{2 * time.Second}, Heap: []int64{20}, CPU: []time.Duration{4 * time.Second}},
	}
	var out strings.Builder
	report(&out, r)
	if want := "ratio apiary/client-go: time 1.50, CPU 1.50, heap 1.50 (goal <= 1.5)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
}
