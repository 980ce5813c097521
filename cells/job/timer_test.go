package job_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
)

func TestTimerInterval(t *testing.T) {
	celltest.InBubble(t, "runs at start and every interval after the previous run ends", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		f.group.Add(job.Timer("gc", func(context.Context) error {
			runs.Record()
			time.Sleep(2 * time.Second) // the run takes 2s
			return nil
		}, 10*time.Second))
		time.Sleep(time.Second)
		if n := runs.Count(); n != 0 {
			t.Fatalf("ran %d times before start", n)
		}
		f.Start()
		defer f.Stop()
		time.Sleep(30 * time.Second)
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(1, 13, 25))
		f.WantHealth("job-gc", cell.LevelOK, "last run succeeded", "")
	})
	celltest.InBubble(t, "errors degrade health until a run succeeds", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		f.group.Add(job.Timer("gc", func(context.Context) error {
			if runs.Record() <= 2 {
				return errUnreachable
			}
			return nil
		}, 10*time.Second))
		f.Start()
		defer f.Stop()
		time.Sleep(15 * time.Second)
		f.WantHealth("job-gc", cell.LevelDegraded, "last run failed", errUnreachable.Error())
		time.Sleep(10 * time.Second)
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 10, 20))
		f.WantHealth("job-gc", cell.LevelOK, "last run succeeded", "")
	})
	celltest.InBubble(t, "stop cancels a run and waits for it", func(t *testing.T) {
		f := newFixture(t)
		var exited atomic.Bool
		f.group.Add(job.Timer("gc", func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(time.Second)
			exited.Store(true)
			return ctx.Err()
		}, time.Minute))
		f.Start()
		time.Sleep(time.Minute)
		f.Stop()
		if !exited.Load() {
			t.Fatal("stop returned before the run exited")
		}
		f.WantHealth("job-gc", cell.LevelStopped, "stopped with the hive", "")
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
	celltest.InBubble(t, "a kick runs it early and restarts the interval", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		kicker := job.NewKicker()
		f.group.Add(job.Timer("gc", func(context.Context) error {
			runs.Record()
			return nil
		}, time.Hour, job.WithKicker(kicker)))
		f.Start()
		defer f.Stop()
		time.Sleep(5 * time.Second)
		kicker.Kick()
		synctest.Wait()
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 5))
		time.Sleep(time.Hour - time.Second)
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 5))
		time.Sleep(time.Second)
		synctest.Wait() // the run due at this instant
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 5, 3605))
	})
	celltest.InBubble(t, "kicks during a run coalesce into one more run", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		release := make(chan struct{})
		kicker := job.NewKicker()
		f.group.Add(job.Timer("gc", func(context.Context) error {
			if runs.Record() == 1 {
				<-release
			}
			return nil
		}, time.Hour, job.WithKicker(kicker)))
		f.Start()
		defer f.Stop()
		for range 3 {
			time.Sleep(time.Second)
			kicker.Kick()
		}
		time.Sleep(7 * time.Second)
		close(release)
		time.Sleep(time.Minute)
		celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0, 10))
	})
	celltest.InBubble(t, "a kick before start is satisfied by the first run", func(t *testing.T) {
		for range stopRepeats { // the extra run came from a random select
			f := newFixture(t)
			runs := celltest.NewClock()
			kicker := job.NewKicker()
			f.group.Add(job.Timer("gc", func(context.Context) error {
				runs.Record()
				return nil
			}, time.Hour, job.WithKicker(kicker)))
			kicker.Kick()
			f.Start()
			time.Sleep(time.Minute)
			f.Stop()
			celltest.WantTimes(t, "runs", runs.Times(), celltest.Secs(0))
		}
	})
	t.Run("never blocks", func(t *testing.T) {
		kicker := job.NewKicker() // not attached to any timer
		for range 10 {
			kicker.Kick()
		}
	})
}
