package status_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/status"
)

var errEtcd = errors.New("etcd unreachable")

// controllers adds one controller that always works and one that always
// fails, retrying after retry, 2*retry, 4*retry, ...
func controllers(retry time.Duration) func(controller.Manager) {
	return func(g controller.Manager) {
		g.Update("sync-good", controller.Params{
			DoFunc:      func(context.Context) error { return nil },
			RunInterval: time.Minute,
		})
		g.Update("sync-bad", controller.Params{
			DoFunc:                 func(context.Context) error { return errEtcd },
			ErrorRetryBaseDuration: retry,
		})
	}
}

func TestControllersProvider(t *testing.T) {
	tests := []struct {
		name      string
		retry     time.Duration
		wantState status.State
		wantRuns  int
	}{
		{name: "one failure is a warning", retry: time.Hour, wantState: status.Warning, wantRuns: 1},
		{name: "three failures are a failure", retry: time.Second, wantState: status.Failure, wantRuns: 3}, // 0s, 1s, 3s
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c status.Collector
				celltest.Start(t, status.Cell, controller.Cell, cell.Module("syncer", "Syncs", cell.Invoke(controllers(tt.retry))),
					celltest.Capture(&c))
				time.Sleep(status.ProbeInterval)
				synctest.Wait()
				got := entry(t, c.Status(), "Controllers")
				want := fmt.Sprintf("sync-bad (module syncer): %d consecutive failure(s): etcd unreachable", tt.wantRuns)
				if got.State != tt.wantState || got.Message != "1/2 healthy" || len(got.Details) != 1 || got.Details[0] != want {
					t.Errorf("Controllers = %+v, want %s 1/2 healthy with %q", got, tt.wantState, want)
				}
			})
		})
	}
}

// degrade reports a degraded scope when the hive starts.
func degrade(lc cell.Lifecycle, h cell.Health) {
	lc.Append(cell.Hook{OnStart: func(cell.HookContext) error {
		h.NewScope("watcher").Degraded("watch failed", errEtcd)
		return nil
	}})
}

func TestHiveProvider(t *testing.T) {
	t.Run("healthy", func(t *testing.T) {
		var c status.Collector
		celltest.Start(t, status.Cell, providerModule("other", "Other"), celltest.Capture(&c))
		got := entry(t, c.Status(), "Hive")
		if got.State != status.Ok || got.Message != "2 modules, 0 degraded" {
			t.Errorf("Hive = %+v, want Ok 2 modules, 0 degraded", got)
		}
	})
	t.Run("degraded", func(t *testing.T) {
		var c status.Collector
		outer := cell.Module("outer", "Outer", cell.Module("inner", "Inner", cell.Invoke(degrade)))
		celltest.Start(t, outer, status.Cell, celltest.Capture(&c))
		got := entry(t, c.Status(), "Hive")
		want := "outer.inner.watcher: watch failed: etcd unreachable"
		if got.State != status.Failure || got.Message != "3 modules, 1 degraded" || len(got.Details) != 1 || got.Details[0] != want {
			t.Errorf("Hive = %+v, want Failure 3 modules, 1 degraded, details [%s]", got, want)
		}
	})
}
