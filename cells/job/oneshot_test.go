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

var errUnreachable = errors.New("etcd unreachable")

// failingOneShot returns a one-shot body that records its attempts and
// fails the first failures of them.
func failingOneShot(attempts *celltest.Clock, failures int) job.OneShotFunc {
	return func(context.Context, cell.Health) error {
		if attempts.Record() <= failures {
			return errUnreachable
		}
		return nil
	}
}

func TestOneShotRuns(t *testing.T) {
	celltest.InBubble(t, "once at start", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		f.group.Add(job.OneShot("sync", failingOneShot(attempts, 0)))
		time.Sleep(time.Second)
		if n := attempts.Count(); n != 0 {
			t.Fatalf("ran %d times before start", n)
		}
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(1))
		f.WantHealth("job-sync", cell.LevelStopped, "completed", "")
	})
	celltest.InBubble(t, "at once when added after start", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		f.Start()
		defer f.Stop()
		time.Sleep(5 * time.Second)
		f.group.Add(job.OneShot("late", failingOneShot(attempts, 0)))
		synctest.Wait()
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(5))
	})
	celltest.InBubble(t, "not when added after stop", func(t *testing.T) {
		f := newFixture(t)
		f.Start()
		f.Stop()
		attempts := celltest.NewClock()
		f.group.Add(job.OneShot("too-late", failingOneShot(attempts, 0)))
		time.Sleep(time.Hour)
		if n := attempts.Count(); n != 0 {
			t.Fatalf("job added after stop ran %d times", n)
		}
		if _, ok := f.HealthOf("job-too-late"); ok {
			t.Fatal("job added after stop reported health")
		}
	})
}

func TestOneShotRetry(t *testing.T) {
	celltest.InBubble(t, "a failure without WithRetry is final", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		f.group.Add(job.OneShot("sync", failingOneShot(attempts, 1)))
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(0))
		f.WantHealth("job-sync", cell.LevelDegraded, "failed after 1 attempt(s)", errUnreachable.Error())
		if reqs := f.shutdown.requests(); len(reqs) != 0 {
			t.Errorf("shutdown requested without WithShutdown: %v", reqs)
		}
	})
	celltest.InBubble(t, "N times with backoff waits", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		backoff := job.Backoff{Min: time.Second, Max: 5 * time.Second, Factor: 3, Jitter: job.NoJitter}
		f.group.Add(job.OneShot("sync", failingOneShot(attempts, 100), job.WithRetry(3, backoff)))
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		// Waits of 1s, 3s and 5s (9s capped).
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(0, 1, 4, 9))
		f.WantHealth("job-sync", cell.LevelDegraded, "failed after 4 attempt(s)", errUnreachable.Error())
	})
	celltest.InBubble(t, "stops retrying on success", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		f.group.Add(job.OneShot("sync", failingOneShot(attempts, 2), job.WithRetry(5, job.Backoff{Min: 2 * time.Second, Jitter: job.NoJitter})))
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(0, 2, 6))
		f.WantHealth("job-sync", cell.LevelStopped, "completed", "")
	})
	celltest.InBubble(t, "forever with -1 until success", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		backoff := job.Backoff{Min: time.Second, Max: 4 * time.Second, Factor: 2, Jitter: job.NoJitter}
		f.group.Add(job.OneShot("sync", failingOneShot(attempts, 9), job.WithRetry(-1, backoff)))
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(0, 1, 3, 7, 11, 15, 19, 23, 27, 31))
		f.WantHealth("job-sync", cell.LevelStopped, "completed", "")
	})
	celltest.InBubble(t, "health is degraded while waiting to retry", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		f.group.Add(job.OneShot("sync", failingOneShot(attempts, 1), job.WithRetry(1, job.Backoff{Min: 10 * time.Second, Jitter: job.NoJitter})))
		f.Start()
		defer f.Stop()
		time.Sleep(5 * time.Second)
		f.WantHealth("job-sync", cell.LevelDegraded, "attempt 1 failed, retrying in 10s", errUnreachable.Error())
		time.Sleep(10 * time.Second)
		f.WantHealth("job-sync", cell.LevelStopped, "completed", "")
	})
	celltest.InBubble(t, "stop during the wait ends the job", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		f.group.Add(job.OneShot("sync", failingOneShot(attempts, 100), job.WithRetry(-1, job.Backoff{Min: time.Hour, Max: time.Hour, Jitter: job.NoJitter})))
		f.Start()
		time.Sleep(time.Minute)
		begin := time.Now()
		f.Stop()
		if d := time.Since(begin); d != 0 {
			t.Errorf("stop took %s, want no wait", d)
		}
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(0))
		f.WantHealth("job-sync", cell.LevelStopped, "stopped with the hive", "")
	})
}

func TestOneShotShutdown(t *testing.T) {
	celltest.InBubble(t, "after the final failure", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		f.group.Add(job.OneShot("sync-routes", failingOneShot(attempts, 100),
			job.WithRetry(2, job.Backoff{Min: time.Second, Factor: 1, Jitter: job.NoJitter}), job.WithShutdown()))
		f.Start()
		defer f.Stop()
		time.Sleep(1500 * time.Millisecond)
		if reqs := f.shutdown.requests(); len(reqs) != 0 {
			t.Fatalf("shutdown before the retries were used up: %v", reqs)
		}
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(0, 1, 2))
		reqs := f.shutdown.requests()
		if len(reqs) != 1 {
			t.Fatalf("%d shutdown requests, want 1", len(reqs))
		}
		if !errors.Is(reqs[0], errUnreachable) || !strings.Contains(reqs[0].Error(), "sync-routes") {
			t.Errorf("shutdown error %q, want the job's error naming the job", reqs[0])
		}
	})
	celltest.InBubble(t, "not on success after a retry", func(t *testing.T) {
		f := newFixture(t)
		attempts := celltest.NewClock()
		f.group.Add(job.OneShot("sync", failingOneShot(attempts, 1),
			job.WithRetry(1, job.Backoff{Min: time.Second, Jitter: job.NoJitter}), job.WithShutdown()))
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		celltest.WantTimes(t, "attempts", attempts.Times(), celltest.Secs(0, 1))
		if reqs := f.shutdown.requests(); len(reqs) != 0 {
			t.Errorf("shutdown requested after success: %v", reqs)
		}
	})
	celltest.InBubble(t, "not when the hive stops", func(t *testing.T) {
		f := newFixture(t)
		f.group.Add(job.OneShot("watch", func(ctx context.Context, _ cell.Health) error {
			<-ctx.Done()
			return ctx.Err()
		}, job.WithShutdown()))
		f.Start()
		time.Sleep(time.Minute)
		f.Stop()
		if reqs := f.shutdown.requests(); len(reqs) != 0 {
			t.Errorf("shutdown requested by a job cancelled by stop: %v", reqs)
		}
		f.WantHealth("job-watch", cell.LevelStopped, "stopped with the hive", "")
	})
}

func TestOneShotLongRunning(t *testing.T) {
	celltest.InBubble(t, "reports running and its own health", func(t *testing.T) {
		f := newFixture(t)
		report := make(chan struct{})
		f.group.Add(job.OneShot("watch", func(ctx context.Context, h cell.Health) error {
			<-report
			h.OK("synced 3 routes")
			<-ctx.Done()
			return nil
		}))
		f.Start()
		defer f.Stop()
		time.Sleep(time.Minute)
		f.WantHealth("job-watch", cell.LevelOK, "running", "")
		close(report)
		synctest.Wait()
		f.WantHealth("job-watch", cell.LevelOK, "synced 3 routes", "")
	})
	celltest.InBubble(t, "is cancelled on stop and stop waits for it", func(t *testing.T) {
		f := newFixture(t)
		var exited atomic.Bool
		f.group.Add(job.OneShot("watch", func(ctx context.Context, _ cell.Health) error {
			<-ctx.Done()
			time.Sleep(3 * time.Second) // cleaning up
			exited.Store(true)
			return ctx.Err()
		}))
		f.Start()
		time.Sleep(time.Minute)
		begin := time.Now()
		f.Stop()
		if !exited.Load() {
			t.Fatal("stop returned before the job exited")
		}
		if d := time.Since(begin); d != 3*time.Second {
			t.Errorf("stop took %s, want 3s (the job's cleanup)", d)
		}
		f.WantHealth("job-watch", cell.LevelStopped, "stopped with the hive", "")
	})
}
