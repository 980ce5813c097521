package job_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
)

func TestTimerInterval(t *testing.T) {
	inBubble(t, "runs at start and every interval after the previous run ends", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		f.group.Add(job.Timer("gc", func(context.Context) error {
			runs.record()
			time.Sleep(2 * time.Second) // the run takes 2s
			return nil
		}, 10*time.Second))
		time.Sleep(time.Second)
		if n := runs.count(); n != 0 {
			t.Fatalf("ran %d times before start", n)
		}
		f.start()
		defer f.stop()
		time.Sleep(30 * time.Second)
		wantTimes(t, "runs", runs.times(), secs(1, 13, 25))
		f.wantHealth("job-gc", cell.LevelOK, "last run succeeded", "")
	})
	inBubble(t, "errors degrade health until a run succeeds", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		f.group.Add(job.Timer("gc", func(context.Context) error {
			if runs.record() <= 2 {
				return errUnreachable
			}
			return nil
		}, 10*time.Second))
		f.start()
		defer f.stop()
		time.Sleep(15 * time.Second)
		f.wantHealth("job-gc", cell.LevelDegraded, "last run failed", errUnreachable.Error())
		time.Sleep(10 * time.Second)
		wantTimes(t, "runs", runs.times(), secs(0, 10, 20))
		f.wantHealth("job-gc", cell.LevelOK, "last run succeeded", "")
	})
	inBubble(t, "stop cancels a run and waits for it", func(t *testing.T) {
		f := newFixture(t)
		var exited atomic.Bool
		f.group.Add(job.Timer("gc", func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(time.Second)
			exited.Store(true)
			return ctx.Err()
		}, time.Minute))
		f.start()
		time.Sleep(time.Minute)
		f.stop()
		if !exited.Load() {
			t.Fatal("stop returned before the run exited")
		}
		f.wantHealth("job-gc", cell.LevelStopped, "stopped with the hive", "")
	})
	t.Run("panics on a non-positive interval", func(t *testing.T) {
		for _, give := range []time.Duration{0, -time.Second} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("Timer with interval %s did not panic", give)
					}
				}()
				job.Timer("gc", func(context.Context) error { return nil }, give)
			}()
		}
	})
}

func TestTimerKicker(t *testing.T) {
	inBubble(t, "a kick runs it early and restarts the interval", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		kicker := job.NewKicker()
		f.group.Add(job.Timer("gc", func(context.Context) error {
			runs.record()
			return nil
		}, time.Hour, job.WithKicker(kicker)))
		f.start()
		defer f.stop()
		time.Sleep(5 * time.Second)
		kicker.Kick()
		synctest.Wait()
		wantTimes(t, "runs", runs.times(), secs(0, 5))
		time.Sleep(time.Hour - time.Second)
		wantTimes(t, "runs", runs.times(), secs(0, 5))
		time.Sleep(time.Second)
		synctest.Wait() // the run due at this instant
		wantTimes(t, "runs", runs.times(), secs(0, 5, 3605))
	})
	inBubble(t, "kicks during a run coalesce into one more run", func(t *testing.T) {
		f := newFixture(t)
		runs := newClock()
		release := make(chan struct{})
		kicker := job.NewKicker()
		f.group.Add(job.Timer("gc", func(context.Context) error {
			if runs.record() == 1 {
				<-release
			}
			return nil
		}, time.Hour, job.WithKicker(kicker)))
		f.start()
		defer f.stop()
		for range 3 {
			time.Sleep(time.Second)
			kicker.Kick()
		}
		time.Sleep(7 * time.Second)
		close(release)
		time.Sleep(time.Minute)
		wantTimes(t, "runs", runs.times(), secs(0, 10))
	})
	inBubble(t, "a kick before start is satisfied by the first run", func(t *testing.T) {
		for range stopRepeats { // the extra run came from a random select
			f := newFixture(t)
			runs := newClock()
			kicker := job.NewKicker()
			f.group.Add(job.Timer("gc", func(context.Context) error {
				runs.record()
				return nil
			}, time.Hour, job.WithKicker(kicker)))
			kicker.Kick()
			f.start()
			time.Sleep(time.Minute)
			f.stop()
			wantTimes(t, "runs", runs.times(), secs(0))
		}
	})
	t.Run("never blocks", func(t *testing.T) {
		kicker := job.NewKicker() // not attached to any timer
		for range 10 {
			kicker.Kick()
		}
	})
}
