package controller_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
)

func TestRuns(t *testing.T) {
	celltest.InBubble(t, "created before start runs at start", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(runs, never)})
		time.Sleep(time.Second)
		if n := runs.Count(); n != 0 {
			t.Fatalf("ran %d times before start", n)
		}
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(1))
	})
	celltest.InBubble(t, "updated and triggered before start runs once at start", func(t *testing.T) {
		f := newFixture(t)
		oldRuns, newRuns := celltest.NewClock(), celltest.NewClock()
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(oldRuns, never)})
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(newRuns, never)})
		f.mgr.Trigger("sync")
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "old runs", oldRuns.Times(), nil)
		celltest.WantTimes(t, "new runs", newRuns.Times(), celltest.Secs(0))
		if st := f.controllerStatus("sync"); st.Runs != 1 {
			t.Errorf("status %+v, want 1 run", st)
		}
	})
	celltest.InBubble(t, "created after start runs at once", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		f.Start()
		defer f.Stop()
		time.Sleep(5 * time.Second)
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(runs, never)})
		synctest.Wait()
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(5))
	})
	celltest.InBubble(t, "every run interval after a success", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		f.mgr.Update("sync", controller.Params{
			DoFunc:      failingDo(runs, never),
			RunInterval: 10 * time.Second,
		})
		f.Start()
		defer f.Stop()
		time.Sleep(35 * time.Second)
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 10, 20, 30))
	})
	celltest.InBubble(t, "created after stop is ignored", func(t *testing.T) {
		f := newFixture(t)
		f.Start()
		f.Stop()
		runs := celltest.NewClock()
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(runs, never)})
		time.Sleep(time.Hour)
		if n := runs.Count(); n != 0 {
			t.Errorf("controller created after stop ran %d times", n)
		}
		if got := f.registry.Controllers(); len(got) != 0 {
			t.Errorf("controller created after stop listed: %+v", got)
		}
	})
	celltest.InBubble(t, "without DoFunc fails", func(t *testing.T) {
		f := newFixture(t)
		f.mgr.Update("sync", controller.Params{NoErrorRetry: true})
		f.Start()
		defer f.Stop()
		synctest.Wait()
		st := f.controllerStatus("sync")
		if st.FailureCount != 1 || st.LastError != "controller has no DoFunc" {
			t.Errorf("status %+v, want one failure for the missing DoFunc", st)
		}
	})
}

func TestErrorRetry(t *testing.T) {
	tests := []struct {
		name string
		give controller.Params
		want []time.Duration
	}{
		{
			name: "doubles from the base duration up to the max retry interval",
			give: controller.Params{ErrorRetryBaseDuration: time.Second, MaxRetryInterval: 5 * time.Second},
			want: celltest.Secs(0, 1, 3, 7, 12, 17),
		},
		{
			name: "base defaults to 1s and the cap to 1m",
			give: controller.Params{},
			want: celltest.Secs(0, 1, 3, 7, 15, 31, 63, 123, 183),
		},
		{
			name: "the cap defaults to the run interval when that is longer than 1m",
			give: controller.Params{ErrorRetryBaseDuration: 30 * time.Second, RunInterval: 5 * time.Minute},
			want: celltest.Secs(0, 30, 90, 210, 450, 750),
		},
		{
			name: "no error retry waits for the run interval",
			give: controller.Params{ErrorRetryBaseDuration: time.Second, RunInterval: 10 * time.Second, NoErrorRetry: true},
			want: celltest.Secs(0, 10, 20),
		},
		{
			name: "no error retry without a run interval runs once",
			give: controller.Params{ErrorRetryBaseDuration: time.Second, NoErrorRetry: true},
			want: celltest.Secs(0),
		},
	}
	for _, tt := range tests {
		celltest.InBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t)
			runs := celltest.NewClock()
			p := tt.give
			p.DoFunc = failingDo(runs, always)
			f.mgr.Update("sync", p)
			f.Start()
			defer f.Stop()
			time.Sleep(tt.want[len(tt.want)-1] + time.Second/2)
			celltest.WantTimes(t, "runs", runs.Times(), tt.want)
		})
	}
	celltest.InBubble(t, "a success resets the backoff", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		f.mgr.Update("sync", controller.Params{
			DoFunc:                 failingDo(runs, func(n int) bool { return n != 3 }),
			RunInterval:            time.Minute,
			ErrorRetryBaseDuration: time.Second,
		})
		f.Start()
		defer f.Stop()
		time.Sleep(65 * time.Second)
		// Fail, fail, succeed at 3s, fail at 63s, retry 1s later.
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 1, 3, 63, 64))
	})
}

func TestStatus(t *testing.T) {
	celltest.InBubble(t, "counts runs, successes and failures", func(t *testing.T) {
		f := newFixture(t, "agent", "routes")
		runs := celltest.NewClock()
		f.mgr.Update("sync-routes", controller.Params{
			DoFunc:                 failingDo(runs, func(n int) bool { return n <= 2 }),
			RunInterval:            time.Minute,
			ErrorRetryBaseDuration: time.Second,
		})
		f.Start()
		defer f.Stop()
		time.Sleep(2 * time.Second) // failed at 0s and 1s
		start := runs.Start()
		failedAt := start.Add(time.Second)
		got := f.controllerStatus("sync-routes")
		want := models.ControllerStatus{
			Name: "sync-routes", Module: "agent.routes", RunInterval: "1m0s",
			Runs: 2, FailureCount: 2, ConsecutiveFailures: 2,
			LastFailure: &failedAt, LastError: errUnreachable.Error(),
		}
		wantStatus(t, got, want)
		f.WantHealth("controller-sync-routes", cell.LevelDegraded, "2 consecutive failure(s)", errUnreachable.Error())

		time.Sleep(2 * time.Second) // succeeded at 3s
		succeededAt := start.Add(3 * time.Second)
		got = f.controllerStatus("sync-routes")
		want.Runs, want.SuccessCount, want.ConsecutiveFailures, want.LastSuccess = 3, 1, 0, &succeededAt
		wantStatus(t, got, want)
		f.WantHealth("controller-sync-routes", cell.LevelOK, "run 3 succeeded", "")
	})
	celltest.InBubble(t, "lists the controllers of all managers by module and name", func(t *testing.T) {
		f := newFixture(t, "routes")
		other := f.newManager("clustermesh")
		ok := controller.Params{DoFunc: func(context.Context) error { return nil }}
		f.mgr.Update("b", ok)
		f.mgr.Update("a", ok)
		other.Update("z", ok)
		f.Start()
		defer f.Stop()
		synctest.Wait()
		var got []string
		for _, st := range f.registry.Controllers() {
			got = append(got, st.Module+"/"+st.Name)
		}
		if want := []string{"clustermesh/z", "routes/a", "routes/b"}; !slices.Equal(got, want) {
			t.Errorf("controllers %v, want %v", got, want)
		}
	})
}

func wantStatus(t *testing.T, got, want models.ControllerStatus) {
	t.Helper()
	timeEq := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	if !timeEq(got.LastSuccess, want.LastSuccess) || !timeEq(got.LastFailure, want.LastFailure) {
		t.Errorf("last success %v, last failure %v; want %v, %v", got.LastSuccess, got.LastFailure, want.LastSuccess, want.LastFailure)
	}
	got.LastSuccess, got.LastFailure, want.LastSuccess, want.LastFailure = nil, nil, nil, nil
	if got != want {
		t.Errorf("status %+v, want %+v", got, want)
	}
}

func TestUpdate(t *testing.T) {
	celltest.InBubble(t, "an update replaces the parameters and runs at once", func(t *testing.T) {
		f := newFixture(t)
		oldRuns, newRuns := celltest.NewClock(), celltest.NewClock()
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(oldRuns, never), RunInterval: time.Hour})
		f.Start()
		defer f.Stop()
		time.Sleep(5 * time.Second)
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(newRuns, never), RunInterval: 10 * time.Second})
		time.Sleep(21 * time.Second)
		celltest.WantTimes(t, "old runs", oldRuns.Times(), celltest.Secs(0))
		celltest.WantTimes(t, "new runs", newRuns.Times(), celltest.Secs(5, 15, 25))
		if st := f.controllerStatus("sync"); st.Runs != 4 || st.RunInterval != "10s" {
			t.Errorf("status %+v, want 4 runs every 10s", st)
		}
	})
	celltest.InBubble(t, "trigger runs it now", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(runs, never), RunInterval: time.Hour})
		f.Start()
		defer f.Stop()
		time.Sleep(5 * time.Second)
		f.mgr.Trigger("sync")
		f.mgr.Trigger("unknown") // ignored
		synctest.Wait()
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 5))
		time.Sleep(time.Hour)
		synctest.Wait() // the run due at this instant
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 5, 3605))
	})
	celltest.InBubble(t, "triggers during a run coalesce into one more run", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		release := make(chan struct{})
		f.mgr.Update("sync", controller.Params{DoFunc: func(context.Context) error {
			if runs.Record() == 1 {
				<-release
			}
			return nil
		}})
		f.Start()
		defer f.Stop()
		for range 3 {
			time.Sleep(time.Second)
			f.mgr.Trigger("sync")
		}
		time.Sleep(7 * time.Second)
		close(release)
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 10))
	})
}

func TestRemove(t *testing.T) {
	celltest.InBubble(t, "stops it, runs StopFunc and unlists it", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		var exited, stopped atomic.Int32
		f.mgr.Update("sync", controller.Params{
			DoFunc: func(ctx context.Context) error {
				if runs.Record() == 1 {
					return nil
				}
				<-ctx.Done() // the second run is under way at removal
				time.Sleep(time.Second)
				exited.Add(1)
				return ctx.Err()
			},
			StopFunc: func(context.Context) error {
				if exited.Load() == 0 {
					t.Error("StopFunc ran before the DoFunc exited")
				}
				stopped.Add(1)
				return nil
			},
			RunInterval: 10 * time.Second,
		})
		f.mgr.Update("other", controller.Params{DoFunc: func(context.Context) error { return nil }})
		f.Start()
		defer f.Stop()
		time.Sleep(time.Minute)
		f.WantHealth("controller-sync", cell.LevelOK, "run 1 succeeded", "")
		begin := time.Now()
		if err := f.mgr.Remove("sync"); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		if exited.Load() != 1 || stopped.Load() != 1 || time.Since(begin) != time.Second {
			t.Fatalf("Remove returned after %s with %d DoFunc exits and %d StopFunc runs, want 1s, 1 and 1",
				time.Since(begin), exited.Load(), stopped.Load())
		}
		for _, st := range f.registry.Controllers() {
			if st.Name == "sync" {
				t.Errorf("removed controller still listed: %+v", st)
			}
		}
		if st, ok := f.HealthOf("controller-sync"); ok {
			t.Errorf("removed controller still reports health: %+v", st)
		}
		f.controllerStatus("other")
		f.WantHealth("controller-other", cell.LevelOK, "run 1 succeeded", "")
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 10))
		f.Stop()
		if n := stopped.Load(); n != 1 {
			t.Errorf("StopFunc ran %d times, want once", n)
		}
	})
	celltest.InBubble(t, "a new controller may take a removed one's name", func(t *testing.T) {
		f := newFixture(t)
		oldRuns, newRuns := celltest.NewClock(), celltest.NewClock()
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(oldRuns, never)})
		f.Start()
		defer f.Stop()
		synctest.Wait()
		if err := f.mgr.Remove("sync"); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		time.Sleep(time.Second)
		f.mgr.Update("sync", controller.Params{DoFunc: failingDo(newRuns, always), NoErrorRetry: true})
		synctest.Wait()
		celltest.WantTimes(t, "old runs", oldRuns.Times(), celltest.Secs(0))
		celltest.WantTimes(t, "new runs", newRuns.Times(), celltest.Secs(1))
		if st := f.controllerStatus("sync"); st.Runs != 1 || st.FailureCount != 1 || st.SuccessCount != 0 {
			t.Errorf("status %+v, want the new controller's one failure only", st)
		}
	})
	celltest.InBubble(t, "returns the StopFunc's error", func(t *testing.T) {
		f := newFixture(t)
		errBusy := errors.New("route table busy")
		f.mgr.Update("sync", controller.Params{
			DoFunc:   func(context.Context) error { return nil },
			StopFunc: func(context.Context) error { return errBusy },
		})
		f.Start()
		defer f.Stop()
		if err := f.mgr.Remove("sync"); !errors.Is(err, errBusy) {
			t.Errorf("Remove = %v, want %v", err, errBusy)
		}
	})
	celltest.InBubble(t, "before start runs StopFunc and never DoFunc", func(t *testing.T) {
		f := newFixture(t)
		runs, stops := celltest.NewClock(), celltest.NewClock()
		f.mgr.Update("sync", controller.Params{
			DoFunc:   failingDo(runs, never),
			StopFunc: func(context.Context) error { stops.Record(); return nil },
		})
		if err := f.mgr.Remove("sync"); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		if runs.Count() != 0 || stops.Count() != 1 {
			t.Errorf("%d runs and %d stops, want 0 and 1", runs.Count(), stops.Count())
		}
	})
	t.Run("unknown name returns ErrNoController", func(t *testing.T) {
		m := controller.NewRegistry().NewManager(controller.ManagerParams{Health: cell.NewHealthTree(nil).Root(), Lifecycle: &cell.DefaultLifecycle{}})
		if err := m.Remove("nope"); !errors.Is(err, controller.ErrNoController) {
			t.Errorf("Remove = %v, want ErrNoController", err)
		}
	})
}

func TestManagerStop(t *testing.T) {
	celltest.InBubble(t, "runs every StopFunc after the DoFuncs exit", func(t *testing.T) {
		f := newFixture(t)
		var running atomic.Int32
		stopped := map[string]*atomic.Int32{"a": {}, "b": {}, "c": {}}
		for name, n := range stopped {
			f.mgr.Update(name, controller.Params{
				DoFunc: func(ctx context.Context) error {
					running.Add(1)
					defer running.Add(-1)
					<-ctx.Done()
					return ctx.Err()
				},
				StopFunc: func(context.Context) error {
					if running.Load() != 0 {
						t.Errorf("StopFunc of %s ran while DoFuncs still run", name)
					}
					n.Add(1)
					return nil
				},
			})
		}
		f.Start()
		time.Sleep(time.Minute)
		f.Stop()
		for name, n := range stopped {
			if n.Load() != 1 {
				t.Errorf("StopFunc of %s ran %d times, want once", name, n.Load())
			}
		}
		if got := f.registry.Controllers(); len(got) != 0 {
			t.Errorf("controllers listed after stop: %+v", got)
		}
	})
	celltest.InBubble(t, "returns the errors of all StopFuncs", func(t *testing.T) {
		f := newFixture(t, "routes")
		errBusy, errGone := errors.New("route table busy"), errors.New("device gone")
		for name, err := range map[string]error{"sync": errBusy, "gc": errGone, "ok": nil} {
			f.mgr.Update(name, controller.Params{
				DoFunc:   func(context.Context) error { return nil },
				StopFunc: func(context.Context) error { return err },
			})
		}
		f.Start()
		err := f.StopErr(context.Background())
		if !errors.Is(err, errBusy) || !errors.Is(err, errGone) {
			t.Errorf("stop = %v, want both %v and %v", err, errBusy, errGone)
		}
	})
}
