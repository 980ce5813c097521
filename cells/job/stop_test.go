package job_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
)

// stopRepeats is how often the tests below stop a group with a request
// pending: the stale run they guard against came from a random select.
const stopRepeats = 50

// lateCalls counts calls of a job's function that begin with its context
// already cancelled: work started after the group was stopped.
type lateCalls struct{ calls, late atomic.Int32 }

func (c *lateCalls) enter(ctx context.Context) {
	c.calls.Add(1)
	if ctx.Err() != nil {
		c.late.Add(1)
	}
}

func (c *lateCalls) check(t *testing.T) {
	t.Helper()
	if n := c.late.Load(); n != 0 {
		t.Errorf("%d of %d calls began after stop", n, c.calls.Load())
	}
}

// longRun makes the first call of a job's function run until stop and
// counts the later calls in late. Wait for started before stopping.
type longRun struct {
	late    *lateCalls
	n       atomic.Int32
	started chan struct{}
}

func newLongRun(late *lateCalls) *longRun {
	return &longRun{late: late, started: make(chan struct{})}
}

func (r *longRun) call(ctx context.Context) error {
	if r.n.Add(1) == 1 {
		close(r.started)
		<-ctx.Done()
		return ctx.Err()
	}
	r.late.enter(ctx)
	return nil
}

func TestNoRunAfterStop(t *testing.T) {
	celltest.InBubble(t, "timer kicked during its last run", func(t *testing.T) {
		var late lateCalls
		for range stopRepeats {
			f := newFixture(t)
			kicker := job.NewKicker()
			run := newLongRun(&late)
			f.group.Add(job.Timer("gc", run.call, time.Hour, job.WithKicker(kicker)))
			f.Start()
			<-run.started
			kicker.Kick()
			f.Stop()
		}
		late.check(t)
	})
	celltest.InBubble(t, "trigger fired during its last run", func(t *testing.T) {
		var late lateCalls
		for range stopRepeats {
			f := newFixture(t)
			run := newLongRun(&late)
			trig := job.NewTrigger("regenerate", func(ctx context.Context, _ []string) error {
				return run.call(ctx)
			}, job.TriggerParams{})
			f.group.Add(trig)
			f.Start()
			trig.Trigger("a")
			<-run.started
			trig.Trigger("b")
			f.Stop()
		}
		late.check(t)
	})
}
