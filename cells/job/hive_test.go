package job_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/job"
)

// routeSyncer is a cell whose constructor adds jobs to its module's group.
type routeSyncer struct {
	watches, exits, syncs atomic.Int32
}

func newRouteSyncer(g job.Group, ctrls controller.Manager) *routeSyncer {
	s := &routeSyncer{}
	g.Add(job.OneShot("watch-routes", func(ctx context.Context, _ cell.Health) error {
		s.watches.Add(1)
		<-ctx.Done()
		time.Sleep(2 * time.Second) // flushing
		s.exits.Add(1)
		return nil
	}))
	ctrls.Update("sync-routes", controller.Params{
		DoFunc:      func(context.Context) error { s.syncs.Add(1); return nil },
		RunInterval: time.Minute,
	})
	return s
}

func TestJobsInHive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			syncer   *routeSyncer
			registry controller.Registry
			health   cell.HealthReporter
		)
		h := celltest.Start(t, controller.Cell,
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
			}, job.WithRetry(2, job.Backoff{Min: time.Second, Jitter: job.NoJitter}), job.WithShutdown()))
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

// hookOrder records the start and stop events of a cell's hooks and jobs.
type hookOrder struct {
	mu     sync.Mutex
	events []string
}

func (o *hookOrder) note(e string) {
	o.mu.Lock()
	o.events = append(o.events, e)
	o.mu.Unlock()
}

func (o *hookOrder) hook(name string) cell.Hook {
	return cell.Hook{
		OnStart: func(cell.HookContext) error { o.note("start " + name); return nil },
		OnStop:  func(cell.HookContext) error { o.note("stop " + name); return nil },
	}
}

func (o *hookOrder) job(name string) job.Job {
	return job.OneShot(name, func(ctx context.Context, _ cell.Health) error {
		o.note("start " + name)
		<-ctx.Done()
		o.note("stop " + name)
		return nil
	})
}

func TestJobsStartInHookOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		order := &hookOrder{}
		// The constructor appends hook a, adds job j1, appends hook b;
		// b's start (after noting itself, so the order does not depend on
		// the scheduler) adds job j2, which runs at once and stops with the
		// group (whose hook precedes a: the group exists before the
		// constructor runs).
		newCell := func(lc cell.Lifecycle, g job.Group) *hookOrder {
			lc.Append(order.hook("a"))
			g.Add(order.job("j1"))
			b := order.hook("b")
			lc.Append(cell.Hook{
				OnStart: func(ctx cell.HookContext) error {
					synctest.Wait() // let the jobs started so far note it
					err := b.OnStart(ctx)
					g.Add(order.job("j2"))
					synctest.Wait() // j2 runs before the start goes on
					return err
				},
				OnStop: b.OnStop,
			})
			return order
		}
		h := celltest.New(t, nil, cell.Module("routes", "Route syncer",
			cell.Provide(newCell), cell.Invoke(func(*hookOrder) {})))
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := h.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := []string{"start a", "start j1", "start b", "start j2", "stop b", "stop j1", "stop a", "stop j2"}
		if !slices.Equal(order.events, want) {
			t.Errorf("events\n  %v\nwant\n  %v", order.events, want)
		}
	})
}
