package job

import (
	"context"
	"fmt"

	"github.com/apiary-net/apiary/cells/cell"
)

// OneShotFunc is the body of a one-shot job. It may run for the whole life
// of the hive (until ctx is cancelled) or return early.
type OneShotFunc func(ctx context.Context, health cell.Health) error

// OneShotOption configures a one-shot job.
type OneShotOption func(*oneShot)

// WithRetry retries a failed one-shot job up to times more times (a
// negative number: forever), waiting per the backoff between attempts.
func WithRetry(times int, b Backoff) OneShotOption {
	return func(o *oneShot) { o.retries, o.backoff = times, b }
}

// WithShutdown shuts the hive down with the job's error when the job fails
// for good (after its retries).
func WithShutdown() OneShotOption {
	return func(o *oneShot) { o.shutdown = true }
}

// OneShot creates a job that runs fn once.
func OneShot(name string, fn OneShotFunc, opts ...OneShotOption) Job {
	o := &oneShot{name: name, fn: fn}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

type oneShot struct {
	name     string
	fn       OneShotFunc
	retries  int
	backoff  Backoff
	shutdown bool
}

func (o *oneShot) Name() string { return o.name }

func (o *oneShot) run(ctx context.Context, env jobEnv) {
	env.health.OK("running")
	for attempt := 1; ; attempt++ {
		err := o.fn(ctx, env.health)
		if ctx.Err() != nil {
			env.health.Stopped("stopped with the hive")
			return
		}
		if err == nil {
			env.health.Stopped("completed")
			return
		}
		if o.retries >= 0 && attempt > o.retries {
			o.fail(env, attempt, err)
			return
		}
		wait := o.backoff.Duration(attempt)
		env.log.Warn("Job failed, retrying", "attempt", attempt, "retry-in", wait, "error", err)
		env.health.Degraded(fmt.Sprintf("attempt %d failed, retrying in %s", attempt, wait), err)
		if !Sleep(ctx, wait) {
			env.health.Stopped("stopped with the hive")
			return
		}
	}
}

func (o *oneShot) fail(env jobEnv, attempts int, err error) {
	env.log.Error("Job failed", "attempts", attempts, "error", err)
	env.health.Degraded(fmt.Sprintf("failed after %d attempt(s)", attempts), err)
	if o.shutdown {
		env.shutdowner.Shutdown(cell.ShutdownWithError(fmt.Errorf("job %s: %w", o.name, err)))
	}
}
