package main

import (
	"testing"

	"github.com/apiary-net/apiary/hack/bench"
)

// TestRunsOnce runs the benchmark once at a tiny size, so that make test
// notices when it no longer runs.
func TestRunsOnce(t *testing.T) {
	bench.RunMain(t, main, false, "-nodes=20", "-identities=40", "-endpoints=80", "-runs=1", "-rate=50", "-steady=1s")
}
