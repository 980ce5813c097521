package policycell_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/policycell"
)

// regenRun is one call of a subscriber.
type regenRun struct {
	at      time.Duration
	reasons []string
}

func TestRegenerationIsDebounced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var regen policy.RegenerationRequests
		celltest.Start(t, kvstorecell.Cell, localnode.Cell, identitycell.Cell, policycell.Cell, celltest.Capture(&regen))
		start := time.Now()
		var (
			mu   sync.Mutex
			runs []regenRun
		)
		regen.Subscribe(func(_ context.Context, reasons []string) error {
			mu.Lock()
			defer mu.Unlock()
			runs = append(runs, regenRun{at: time.Since(start), reasons: reasons})
			return nil
		})

		// A burst of five changes 10ms apart, then a lone change later.
		for _, r := range []string{"a", "b", "a", "c", "b"} {
			regen.Request(r)
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		regen.Request("d")
		time.Sleep(time.Second)
		synctest.Wait()

		mu.Lock()
		defer mu.Unlock()
		if len(runs) != 2 {
			t.Fatalf("runs = %+v, want 2 (one per burst)", runs)
		}
		// The burst's last request came at 40ms; it runs after 100ms quiet.
		if runs[0].at != 140*time.Millisecond || !slices.Equal(runs[0].reasons, []string{"a", "b", "c"}) {
			t.Errorf("first run = %+v, want at 140ms with reasons a, b, c", runs[0])
		}
		if runs[1].at != 1150*time.Millisecond || !slices.Equal(runs[1].reasons, []string{"d"}) {
			t.Errorf("second run = %+v, want at 1.15s with reason d", runs[1])
		}
		if requests, n := regen.Stats(); requests != 6 || n != 2 {
			t.Errorf("Stats = %d requests, %d runs; want 6 and 2", requests, n)
		}
	})
}
