package cmbench_test

import (
	"testing"
	"time"

	"github.com/apiary-net/apiary/hack/bench/cmbench"
)

// TestTiny runs the whole benchmark on a small remote (100 nodes, 1,000
// identities, 2,000 ipcache entries), so that `make test` exercises the
// code path: both readers must see every entry and every steady-state
// put must reach the ipcache listener. Times are printed, not judged.
func TestTiny(t *testing.T) {
	r, err := cmbench.Measure(t, cmbench.Size{Nodes: 100, Identities: 1000, Endpoints: 2000}, 2, 200, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ApiaryAll) != 2 || len(r.PeerAll) != 2 || r.Steady.Puts != 100 {
		t.Errorf("results = %+v, want 2 rounds per side and 100 steady-state puts", r)
	}
	t.Logf("apiary %s, peer %s, steady p50 %s p99 %s", r.Apiary, r.Peer, r.Steady.P50, r.Steady.P99)
}
