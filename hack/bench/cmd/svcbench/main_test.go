package main

import (
	"testing"

	"github.com/apiary-net/apiary/hack/bench"
)

// TestRunsOnce runs the benchmark once at a tiny size, so that make test
// notices when it no longer runs (record checks that the maps hold every
// change).
func TestRunsOnce(t *testing.T) {
	bench.RunMain(t, main, true, "-services=50", "-backends=3", "-changes=20", "-rounds=1", "-layers")
}
