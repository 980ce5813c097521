package status_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/status"
)

var errEtcd = errors.New("etcd unreachable")

// controllers adds one controller that always works and one that always
// fails (retrying after 1s, 2s, 4s, ...).
func controllers(g job.Group) {
	g.UpdateController("sync-good", job.ControllerParams{
		DoFunc:      func(context.Context) error { return nil },
		RunInterval: time.Minute,
	})
	g.UpdateController("sync-bad", job.ControllerParams{
		DoFunc:                 func(context.Context) error { return errEtcd },
		ErrorRetryBaseDuration: time.Second,
	})
}

func TestControllersProvider(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c status.Collector
		celltest.Start(t, status.Cell, cell.Module("syncer", "Syncs", cell.Invoke(controllers)), celltest.Capture(&c))
		synctest.Wait()
		got := entry(t, c.Status(), "Controllers")
		if got.State != status.Warning || got.Message != "1/2 healthy" {
			t.Errorf("after the first failure: %+v, want Warning 1/2 healthy", got)
		}
		time.Sleep(status.ProbeInterval) // failures at 0s, 1s, 3s
		synctest.Wait()
		got = entry(t, c.Status(), "Controllers")
		want := "sync-bad (module syncer): 3 consecutive failure(s): etcd unreachable"
		if got.State != status.Failure || got.Message != "1/2 healthy" || len(got.Details) != 1 || got.Details[0] != want {
			t.Errorf("after 3 failures: %+v, want Failure 1/2 healthy with %q", got, want)
		}
	})
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
