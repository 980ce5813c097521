package main

import (
	"testing"

	"github.com/apiary-net/apiary/hack/bench"
)

// TestRunsOnce runs the benchmark once at a tiny rate, so that make test
// notices when it no longer runs.
func TestRunsOnce(t *testing.T) {
	bench.RunMain(t, main, true, "-rate=2000", "-duration=200ms", "-capacity=4095")
}
