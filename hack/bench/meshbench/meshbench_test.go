package meshbench_test

import (
	"testing"
	"time"

	"github.com/apiary-net/apiary/hack/bench/cmbench"
	"github.com/apiary-net/apiary/hack/bench/meshbench"
)

// TestTiny runs the whole benchmark once on a small remote (100 nodes,
// 1,000 identities, 2,000 ipcache entries), so that `make test`
// exercises it: both sides must get ready (apiary holding every entry,
// KVStoreMesh reporting the remote ready) and report their memory.
// Figures are printed, not judged.
func TestTiny(t *testing.T) {
	r, err := meshbench.Measure(t, meshbench.Options{Size: cmbench.Size{Nodes: 100, Identities: 1000, Endpoints: 2000}, Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Apiary) != 1 || len(r.KVStoreMesh) != 1 {
		t.Fatalf("results = %+v, want one run per side", r)
	}
	for name, s := range map[string]meshbench.Sample{"apiary": r.Apiary[0], "kvstoremesh": r.KVStoreMesh[0]} {
		if s.Ready <= 0 || s.RSS == 0 || s.HWM < s.RSS || s.LiveHeap == 0 {
			t.Errorf("%s: %+v, want a time to ready, RSS <= HWM and a live heap", name, s)
		}
		t.Logf("%s: ready %s, RSS %d MB, HWM %d MB, live heap %d MB", name, s.Ready.Round(time.Millisecond), s.RSS>>20, s.HWM>>20, s.LiveHeap>>20)
	}
}
