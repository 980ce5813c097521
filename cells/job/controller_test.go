package job_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
)

// failingDo returns a DoFunc that records its runs and fails those for
// which fail returns true (given the 1-based run number).
func failingDo(runs *clock, fail func(n int) bool) func(context.Context) error {
	return func(context.Context) error {
		if fail(runs.record()) {
			return errUnreachable
		}
		return nil
	}
}

func never(int) bool  { return false }
func always(int) bool { return true }

// controllerStatus returns the status of the named controller from the
// registry's listing.
func (f *fixture) controllerStatus(name string) job.ControllerStatus {
	f.t.Helper()
	for _, st := range f.registry.Controllers() {
		if st.Name == name {
			return st
		}
	}
	f.t.Fatalf("controller %q not listed in %+v", name, f.registry.Controllers())
	return job.ControllerStatus{}
}

func TestControllerRuns(t *testing.T) {
	inBubble(t, "created before start runs at start", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(runs, never)})
		time.Sleep(time.Second)
		if n := runs.count(); n != 0 {
			t.Fatalf("ran %d times before start", n)
		}
		f.start()
		defer f.stop()
		time.Sleep(time.Hour)
		wantTimes(t, "runs", runs.times(), secs(1))
	})
	inBubble(t, "updated and triggered before start runs once at start", func(t *testing.T) {
		f := newFixture(t)
		oldRuns, newRuns := newClock(), newClock()
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(oldRuns, never)})
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(newRuns, never)})
		f.group.TriggerController("sync")
		f.start()
		defer f.stop()
		time.Sleep(time.Hour)
		wantTimes(t, "old runs", oldRuns.times(), nil)
		wantTimes(t, "new runs", newRuns.times(), secs(0))
		if st := f.controllerStatus("sync"); st.Runs != 1 {
			t.Errorf("status %+v, want 1 run", st)
		}
	})
	inBubble(t, "created after start runs at once", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		f.start()
		defer f.stop()
		time.Sleep(5 * time.Second)
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(runs, never)})
		synctest.Wait()
		wantTimes(t, "runs", runs.times(), secs(5))
	})
	inBubble(t, "every run interval after a success", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		f.group.UpdateController("sync", job.ControllerParams{
			DoFunc:      failingDo(runs, never),
			RunInterval: 10 * time.Second,
		})
		f.start()
		defer f.stop()
		time.Sleep(35 * time.Second)
		wantTimes(t, "runs", runs.times(), secs(0, 10, 20, 30))
	})
	inBubble(t, "created after stop is ignored", func(t *testing.T) {
		f := newFixture(t)
		f.start()
		f.stop()
		runs := newClock()
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(runs, never)})
		time.Sleep(time.Hour)
		if n := runs.count(); n != 0 {
			t.Errorf("controller created after stop ran %d times", n)
		}
		if got := f.registry.Controllers(); len(got) != 0 {
			t.Errorf("controller created after stop listed: %+v", got)
		}
	})
	inBubble(t, "without DoFunc fails", func(t *testing.T) {
		f := newFixture(t)
		f.group.UpdateController("sync", job.ControllerParams{NoErrorRetry: true})
		f.start()
		defer f.stop()
		synctest.Wait()
		st := f.controllerStatus("sync")
		if st.FailureCount != 1 || st.LastError != "controller has no DoFunc" {
			t.Errorf("status %+v, want one failure for the missing DoFunc", st)
		}
	})
}

func TestControllerErrorRetry(t *testing.T) {
	tests := []struct {
		name string
		give job.ControllerParams
		want []time.Duration
	}{
		{
			name: "doubles from the base duration up to the max retry interval",
			give: job.ControllerParams{ErrorRetryBaseDuration: time.Second, MaxRetryInterval: 5 * time.Second},
			want: secs(0, 1, 3, 7, 12, 17),
		},
		{
			name: "base defaults to 1s and the cap to 1m",
			give: job.ControllerParams{},
			want: secs(0, 1, 3, 7, 15, 31, 63, 123, 183),
		},
		{
			name: "the cap defaults to the run interval when that is longer than 1m",
			give: job.ControllerParams{ErrorRetryBaseDuration: 30 * time.Second, RunInterval: 5 * time.Minute},
			want: secs(0, 30, 90, 210, 450, 750),
		},
		{
			name: "no error retry waits for the run interval",
			give: job.ControllerParams{ErrorRetryBaseDuration: time.Second, RunInterval: 10 * time.Second, NoErrorRetry: true},
			want: secs(0, 10, 20),
		},
		{
			name: "no error retry without a run interval runs once",
			give: job.ControllerParams{ErrorRetryBaseDuration: time.Second, NoErrorRetry: true},
			want: secs(0),
		},
	}
	for _, tt := range tests {
		inBubble(t, tt.name, func(t *testing.T) {
			f := newFixture(t)
			runs := newClock()
			p := tt.give
			p.DoFunc = failingDo(runs, always)
			f.group.UpdateController("sync", p)
			f.start()
			defer f.stop()
			time.Sleep(tt.want[len(tt.want)-1] + time.Second/2)
			wantTimes(t, "runs", runs.times(), tt.want)
		})
	}
	inBubble(t, "a success resets the backoff", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		f.group.UpdateController("sync", job.ControllerParams{
			DoFunc:                 failingDo(runs, func(n int) bool { return n != 3 }),
			RunInterval:            time.Minute,
			ErrorRetryBaseDuration: time.Second,
		})
		f.start()
		defer f.stop()
		time.Sleep(65 * time.Second)
		// Fail, fail, succeed at 3s, fail at 63s, retry 1s later.
		wantTimes(t, "runs", runs.times(), secs(0, 1, 3, 63, 64))
	})
}

func TestControllerStatus(t *testing.T) {
	inBubble(t, "counts runs, successes and failures", func(t *testing.T) {
		f := newFixture(t, "agent", "routes")
		runs := newClock()
		f.group.UpdateController("sync-routes", job.ControllerParams{
			DoFunc:                 failingDo(runs, func(n int) bool { return n <= 2 }),
			RunInterval:            time.Minute,
			ErrorRetryBaseDuration: time.Second,
		})
		f.start()
		defer f.stop()
		time.Sleep(2 * time.Second) // failed at 0s and 1s
		start := runs.start
		failedAt := start.Add(time.Second)
		got := f.controllerStatus("sync-routes")
		want := job.ControllerStatus{
			Name: "sync-routes", Module: "agent.routes", RunInterval: "1m0s",
			Runs: 2, FailureCount: 2, ConsecutiveFailures: 2,
			LastFailure: &failedAt, LastError: errUnreachable.Error(),
		}
		wantStatus(t, got, want)
		f.wantHealth("controller-sync-routes", cell.LevelDegraded, "2 consecutive failure(s)", errUnreachable.Error())

		time.Sleep(2 * time.Second) // succeeded at 3s
		succeededAt := start.Add(3 * time.Second)
		got = f.controllerStatus("sync-routes")
		want.Runs, want.SuccessCount, want.ConsecutiveFailures, want.LastSuccess = 3, 1, 0, &succeededAt
		wantStatus(t, got, want)
		f.wantHealth("controller-sync-routes", cell.LevelOK, "run 3 succeeded", "")
	})
	inBubble(t, "lists the controllers of all groups by module and name", func(t *testing.T) {
		f := newFixture(t, "routes")
		other := f.newGroup("clustermesh")
		ok := job.ControllerParams{DoFunc: func(context.Context) error { return nil }}
		f.group.UpdateController("b", ok)
		f.group.UpdateController("a", ok)
		other.UpdateController("z", ok)
		f.start()
		defer f.stop()
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

func wantStatus(t *testing.T, got, want job.ControllerStatus) {
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

func TestControllerUpdate(t *testing.T) {
	inBubble(t, "an update replaces the parameters and runs at once", func(t *testing.T) {
		f := newFixture(t)
		oldRuns, newRuns := newClock(), newClock()
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(oldRuns, never), RunInterval: time.Hour})
		f.start()
		defer f.stop()
		time.Sleep(5 * time.Second)
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(newRuns, never), RunInterval: 10 * time.Second})
		time.Sleep(21 * time.Second)
		wantTimes(t, "old runs", oldRuns.times(), secs(0))
		wantTimes(t, "new runs", newRuns.times(), secs(5, 15, 25))
		if st := f.controllerStatus("sync"); st.Runs != 4 || st.RunInterval != "10s" {
			t.Errorf("status %+v, want 4 runs every 10s", st)
		}
	})
	inBubble(t, "trigger runs it now", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(runs, never), RunInterval: time.Hour})
		f.start()
		defer f.stop()
		time.Sleep(5 * time.Second)
		f.group.TriggerController("sync")
		f.group.TriggerController("unknown") // ignored
		synctest.Wait()
		wantTimes(t, "runs", runs.times(), secs(0, 5))
		time.Sleep(time.Hour)
		synctest.Wait() // the run due at this instant
		wantTimes(t, "runs", runs.times(), secs(0, 5, 3605))
	})
	inBubble(t, "triggers during a run coalesce into one more run", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		release := make(chan struct{})
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: func(context.Context) error {
			if runs.record() == 1 {
				<-release
			}
			return nil
		}})
		f.start()
		defer f.stop()
		for range 3 {
			time.Sleep(time.Second)
			f.group.TriggerController("sync")
		}
		time.Sleep(7 * time.Second)
		close(release)
		time.Sleep(time.Hour)
		wantTimes(t, "runs", runs.times(), secs(0, 10))
	})
}

func TestControllerRemove(t *testing.T) {
	inBubble(t, "stops it, runs StopFunc and unlists it", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		var exited, stopped atomic.Int32
		f.group.UpdateController("sync", job.ControllerParams{
			DoFunc: func(ctx context.Context) error {
				if runs.record() == 1 {
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
		f.group.UpdateController("other", job.ControllerParams{DoFunc: func(context.Context) error { return nil }})
		f.start()
		defer f.stop()
		time.Sleep(time.Minute)
		f.wantHealth("controller-sync", cell.LevelOK, "run 1 succeeded", "")
		begin := time.Now()
		if err := f.group.RemoveController("sync"); err != nil {
			t.Fatalf("RemoveController: %v", err)
		}
		if exited.Load() != 1 || stopped.Load() != 1 || time.Since(begin) != time.Second {
			t.Fatalf("RemoveController returned after %s with %d DoFunc exits and %d StopFunc runs, want 1s, 1 and 1",
				time.Since(begin), exited.Load(), stopped.Load())
		}
		for _, st := range f.registry.Controllers() {
			if st.Name == "sync" {
				t.Errorf("removed controller still listed: %+v", st)
			}
		}
		if st, ok := f.healthOf("controller-sync"); ok {
			t.Errorf("removed controller still reports health: %+v", st)
		}
		f.controllerStatus("other")
		f.wantHealth("controller-other", cell.LevelOK, "run 1 succeeded", "")
		time.Sleep(time.Hour)
		wantTimes(t, "runs", runs.times(), secs(0, 10))
		f.stop()
		if n := stopped.Load(); n != 1 {
			t.Errorf("StopFunc ran %d times, want once", n)
		}
	})
	inBubble(t, "a new controller may take a removed one's name", func(t *testing.T) {
		f := newFixture(t)
		oldRuns, newRuns := newClock(), newClock()
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(oldRuns, never)})
		f.start()
		defer f.stop()
		synctest.Wait()
		if err := f.group.RemoveController("sync"); err != nil {
			t.Fatalf("RemoveController: %v", err)
		}
		time.Sleep(time.Second)
		f.group.UpdateController("sync", job.ControllerParams{DoFunc: failingDo(newRuns, always), NoErrorRetry: true})
		synctest.Wait()
		wantTimes(t, "old runs", oldRuns.times(), secs(0))
		wantTimes(t, "new runs", newRuns.times(), secs(1))
		if st := f.controllerStatus("sync"); st.Runs != 1 || st.FailureCount != 1 || st.SuccessCount != 0 {
			t.Errorf("status %+v, want the new controller's one failure only", st)
		}
	})
	inBubble(t, "returns the StopFunc's error", func(t *testing.T) {
		f := newFixture(t)
		errBusy := errors.New("route table busy")
		f.group.UpdateController("sync", job.ControllerParams{
			DoFunc:   func(context.Context) error { return nil },
			StopFunc: func(context.Context) error { return errBusy },
		})
		f.start()
		defer f.stop()
		if err := f.group.RemoveController("sync"); !errors.Is(err, errBusy) {
			t.Errorf("RemoveController = %v, want %v", err, errBusy)
		}
	})
	inBubble(t, "before start runs StopFunc and never DoFunc", func(t *testing.T) {
		f := newFixture(t)
		runs, stops := newClock(), newClock()
		f.group.UpdateController("sync", job.ControllerParams{
			DoFunc:   failingDo(runs, never),
			StopFunc: func(context.Context) error { stops.record(); return nil },
		})
		if err := f.group.RemoveController("sync"); err != nil {
			t.Fatalf("RemoveController: %v", err)
		}
		f.start()
		defer f.stop()
		time.Sleep(time.Hour)
		if runs.count() != 0 || stops.count() != 1 {
			t.Errorf("%d runs and %d stops, want 0 and 1", runs.count(), stops.count())
		}
	})
	t.Run("unknown name returns ErrNoController", func(t *testing.T) {
		g := job.NewRegistry().NewGroup(job.GroupParams{Health: cell.NewHealthTree(nil).Root(), Lifecycle: &cell.DefaultLifecycle{}})
		if err := g.RemoveController("nope"); !errors.Is(err, job.ErrNoController) {
			t.Errorf("RemoveController = %v, want ErrNoController", err)
		}
	})
}

func TestControllerGroupStop(t *testing.T) {
	inBubble(t, "runs every StopFunc after the DoFuncs exit", func(t *testing.T) {
		f := newFixture(t)
		var running atomic.Int32
		stopped := map[string]*atomic.Int32{"a": {}, "b": {}, "c": {}}
		for name, n := range stopped {
			f.group.UpdateController(name, job.ControllerParams{
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
		f.start()
		time.Sleep(time.Minute)
		f.stop()
		for name, n := range stopped {
			if n.Load() != 1 {
				t.Errorf("StopFunc of %s ran %d times, want once", name, n.Load())
			}
		}
		if got := f.registry.Controllers(); len(got) != 0 {
			t.Errorf("controllers listed after stop: %+v", got)
		}
	})
	inBubble(t, "returns the errors of all StopFuncs", func(t *testing.T) {
		f := newFixture(t, "routes")
		errBusy, errGone := errors.New("route table busy"), errors.New("device gone")
		for name, err := range map[string]error{"sync": errBusy, "gc": errGone, "ok": nil} {
			f.group.UpdateController(name, job.ControllerParams{
				DoFunc:   func(context.Context) error { return nil },
				StopFunc: func(context.Context) error { return err },
			})
		}
		f.start()
		err := f.stopErr(context.Background())
		if !errors.Is(err, errBusy) || !errors.Is(err, errGone) {
			t.Errorf("stop = %v, want both %v and %v", err, errBusy, errGone)
		}
	})
}
