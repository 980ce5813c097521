package controller_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
)

// stopRepeats is how often the test stops a manager with a trigger
// pending: the stale run it guards against came from a random select.
const stopRepeats = 50

func TestNoRunAfterStop(t *testing.T) {
	celltest.InBubble(t, "controller triggered during its last run", func(t *testing.T) {
		var calls, late atomic.Int32
		for range stopRepeats {
			f := newFixture(t)
			started := make(chan struct{})
			var n atomic.Int32
			f.mgr.Update("sync", controller.Params{DoFunc: func(ctx context.Context) error {
				if n.Add(1) == 1 {
					close(started)
					<-ctx.Done()
					return ctx.Err()
				}
				calls.Add(1)
				if ctx.Err() != nil {
					late.Add(1)
				}
				return nil
			}})
			f.Start()
			<-started
			f.mgr.Trigger("sync")
			f.Stop()
		}
		if n := late.Load(); n != 0 {
			t.Errorf("%d of %d calls began after stop", n, calls.Load())
		}
	})
}
