package main

import (
	"testing"

	"github.com/apiary-net/apiary/hack/bench"
)

// TestRunsOnce runs the benchmark once at a tiny size, so that make test
// notices when it no longer runs.
func TestRunsOnce(t *testing.T) {
	bench.RunMain(t, main, true, "-prefixes=200", "-keys=50", "-services=20", "-backends=3", "-rounds=1")
}
