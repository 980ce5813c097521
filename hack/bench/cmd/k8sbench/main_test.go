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
	r := k8sbench.Results{
		Size: k8sbench.Full, Runs: 3,
		Apiary: k8sbench.Side{Took: []time.Duration{3 * time.Second, 1 * time.Second, 2 * time.Second}, Heap: []int64{30, 10, 20},
			CPU: []time.Duration{4 * time.Second}, Synced: []map[string]time.Duration{{"core/v1::Pods": time.Second}}},
		Peer: k8sbench.Side{Took: []time.Duration{time.Second, time.Second, time.Second}, Heap: []int64{10, 10, 10},
			CPU: []time.Duration{2 * time.Second}},
	}
	var out strings.Builder
	report(&out, r)
	for _, want := range []string{
		"ratio apiary/client-go: time 2.00 (goal <= 1.5), heap 2.00\n",
		"client-go 2s, apiary 4s, ratio 2.00\n",
		"core/v1::Pods",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
