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

// TestReportRounds checks the ratios of each round and their median.
func TestReportRounds(t *testing.T) {
	r := k8sbench.CEPResults{Size: k8sbench.CEPFull, Runs: 3,
		Apiary: k8sbench.Side{Took: []time.Duration{3 * time.Second, 10 * time.Second, 4 * time.Second},
			Heap: []int64{30, 30, 30}, CPU: []time.Duration{6 * time.Second, 6 * time.Second, 6 * time.Second}},
		Peer: k8sbench.Side{Took: []time.Duration{2 * time.Second, 5 * time.Second, 4 * time.Second},
			Heap: []int64{20, 20, 20}, CPU: []time.Duration{4 * time.Second, 5 * time.Second, 6 * time.Second}},
	}
	var out strings.Builder
	report(&out, r)
	for _, want := range []string{
		"round 2: client-go 5s, CPU 5s; apiary 10s, CPU 6s; ratio time 2.00, CPU 1.20\n",
		"median of the rounds' ratios: time 1.50, CPU 1.20\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
