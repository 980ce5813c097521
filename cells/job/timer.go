package job

import (
	"context"
	"fmt"
	"time"
)

// TimerFunc is the body of a timer job.
type TimerFunc func(ctx context.Context) error

// TimerOption configures a timer job.
type TimerOption func(*timer)

// WithKicker lets k run the timer early.
func WithKicker(k *Kicker) TimerOption {
	return func(t *timer) { t.kicker = k }
}

// Kicker runs a timer job before its interval is up. A run answers the
// kicks that arrived before it started (a kick before the hive starts
// adds no run to the first one); kicks that arrive while the job runs are
// coalesced into one more run.
type Kicker struct {
	ch chan struct{}
}

// NewKicker returns a kicker to pass to WithKicker.
func NewKicker() *Kicker { return &Kicker{ch: make(chan struct{}, 1)} }

// Kick asks for a run as soon as possible; it never blocks.
func (k *Kicker) Kick() {
	select {
	case k.ch <- struct{}{}:
	default:
	}
}

// Timer creates a job that runs fn at start and then every interval (the
// interval counts from the end of the previous run).
func Timer(name string, fn TimerFunc, interval time.Duration, opts ...TimerOption) Job {
	if interval <= 0 {
		panic(fmt.Sprintf("job.Timer %q: interval must be positive", name))
	}
	t := &timer{name: name, fn: fn, interval: interval}
	for _, o := range opts {
		o(t)
	}
	return t
}

type timer struct {
	name     string
	fn       TimerFunc
	interval time.Duration
	kicker   *Kicker
}

func (t *timer) Name() string { return t.name }

func (t *timer) run(ctx context.Context, env jobEnv) {
	var kicks chan struct{}
	if t.kicker != nil {
		kicks = t.kicker.ch
	}
	tick := time.NewTimer(0)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			env.health.Stopped("stopped with the hive")
			return
		case <-tick.C:
		case <-kicks:
		}
		if ctx.Err() != nil {
			// A kick or tick raced with stop: select picks at random.
			env.health.Stopped("stopped with the hive")
			return
		}
		// This run answers a kick that came before it (at start, or
		// with the tick): only kicks during the run ask for another.
		select {
		case <-kicks:
		default:
		}
		if err := t.fn(ctx); err != nil {
			if ctx.Err() != nil {
				continue
			}
			env.log.Warn("Timer job failed", "error", err)
			env.health.Degraded("last run failed", err)
		} else {
			env.health.OK("last run succeeded")
		}
		tick.Reset(t.interval)
	}
}
