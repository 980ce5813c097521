package job_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
)

// routeSyncer is a cell whose constructor adds jobs to its module's group.
type routeSyncer struct {
	watches, exits, syncs atomic.Int32
}

func newRouteSyncer(g job.Group) *routeSyncer {
	s := &routeSyncer{}
	g.Add(job.OneShot("watch-routes", func(ctx context.Context, _ cell.Health) error {
		s.watches.Add(1)
		<-ctx.Done()
		time.Sleep(2 * time.Second) // flushing
		s.exits.Add(1)
		return nil
	}))
	g.UpdateController("sync-routes", job.ControllerParams{
		DoFunc:      func(context.Context) error { s.syncs.Add(1); return nil },
		RunInterval: time.Minute,
	})
	return s
}

func TestJobsInHive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			syncer   *routeSyncer
			registry job.Registry
			health   cell.HealthReporter
		)
		h := celltest.Start(t,
			cell.Module("routes", "Route syncer", cell.Provide(newRouteSyncer)),
			celltest.Capture(&syncer), celltest.Capture(&registry), celltest.Capture(&health))
		time.Sleep(150 * time.Second)
		if n, m := syncer.watches.Load(), syncer.syncs.Load(); n != 1 || m != 3 {
			t.Errorf("%d watches and %d syncs after 150s, want 1 and 3", n, m)
		}
		ctrls := registry.Controllers()
		if len(ctrls) != 1 || ctrls[0].Module != "routes" || ctrls[0].Name != "sync-routes" || ctrls[0].SuccessCount != 3 {
			t.Errorf("controllers %+v, want routes/sync-routes with 3 successes", ctrls)
		}
		wantLevels(t, health, map[string]cell.Level{
			"routes.job-watch-routes":       cell.LevelOK,
			"routes.controller-sync-routes": cell.LevelOK,
		})

		begin := time.Now()
		if err := h.Stop(context.Background()); err != nil {
			t.Fatalf("stop: %v", err)
		}
		if syncer.exits.Load() != 1 || time.Since(begin) != 2*time.Second {
			t.Errorf("stop returned after %s with %d job exits, want 2s and 1", time.Since(begin), syncer.exits.Load())
		}
		wantLevels(t, health, map[string]cell.Level{"routes.job-watch-routes": cell.LevelStopped})
	})
}

func TestOneShotShutsHiveDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errCorrupt := errors.New("state dir corrupt")
		h := celltest.New(t, nil, cell.Module("restore", "State restore", cell.Invoke(func(g job.Group) {
			g.Add(job.OneShot("restore-endpoints", func(context.Context, cell.Health) error {
				return errCorrupt
			}, job.WithRetry(2, job.Backoff{Min: time.Second}), job.WithShutdown()))
		})))
		begin := time.Now()
		err := h.Run(context.Background())
		if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "restore-endpoints") {
			t.Errorf("Run = %v, want the job's error naming the job", err)
		}
		if d := time.Since(begin); d != 3*time.Second {
			t.Errorf("Run returned after %s, want 3s (two retries)", d)
		}
	})
}

func wantLevels(t *testing.T, health cell.HealthReporter, want map[string]cell.Level) {
	t.Helper()
	got := map[string]cell.Level{}
	for _, st := range health.All() {
		got[st.ID] = st.Level
	}
	for id, level := range want {
		if got[id] != level {
			t.Errorf("health of %s = %q, want %q (all: %v)", id, got[id], level, got)
		}
	}
}
