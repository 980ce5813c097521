package main

import (
	"testing"

	"github.com/apiary-net/apiary/hack/bench"
)

// TestRunsOnce runs the benchmark once at a tiny size, so that make test
// notices when it no longer runs.
func TestRunsOnce(t *testing.T) {
	bench.RunMain(t, main, false, "-nodes=10", "-identities=20", "-endpoints=40", "-runs=1", "-settle=100ms")
}
