package job

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// TriggerFunc runs once per coalesced burst; reasons are the distinct
// reasons given to Trigger since the previous run, in arrival order.
type TriggerFunc func(ctx context.Context, reasons []string) error

// TriggerParams shape how a trigger coalesces events.
type TriggerParams struct {
	// After is the quiet period: the trigger fires once no event has
	// arrived for After (0: fire as soon as possible).
	After time.Duration
	// Max bounds the delay: the trigger fires at the latest Max after the
	// first event of a burst, however busy (0: no bound).
	Max time.Duration
	// MinInterval is the least time between the starts of two runs.
	MinInterval time.Duration
}

// Trigger is a job that coalesces bursts of events into single runs and
// never runs its function twice at once. Events that arrive during a run
// are collected for the next one.
type Trigger struct {
	name   string
	fn     TriggerFunc
	params TriggerParams
	notify chan struct{}

	mu      sync.Mutex
	reasons []string
	seen    map[string]bool
	first   time.Time // first event of the pending burst
	last    time.Time // latest event of the pending burst
	folded  int       // events folded into the pending burst
}

var _ Job = (*Trigger)(nil)

// NewTrigger creates a trigger job; add it to a group and call Trigger.
func NewTrigger(name string, fn TriggerFunc, p TriggerParams) *Trigger {
	if p.After < 0 || p.Max < 0 || p.MinInterval < 0 {
		panic(fmt.Sprintf("job.NewTrigger %q: negative durations", name))
	}
	return &Trigger{name: name, fn: fn, params: p, notify: make(chan struct{}, 1), seen: map[string]bool{}}
}

// Name returns the trigger's name.
func (t *Trigger) Name() string { return t.name }

// Trigger records an event; it never blocks.
func (t *Trigger) Trigger(reason string) {
	t.mu.Lock()
	now := time.Now()
	if t.folded == 0 {
		t.first = now
	}
	t.last = now
	t.folded++
	if !t.seen[reason] {
		t.seen[reason] = true
		t.reasons = append(t.reasons, reason)
	}
	t.mu.Unlock()
	select {
	case t.notify <- struct{}{}:
	default:
	}
}

// due returns when the pending burst should run, and whether one is pending.
func (t *Trigger) due(lastRun time.Time) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.folded == 0 {
		return time.Time{}, false
	}
	at := t.last.Add(t.params.After)
	if t.params.Max > 0 {
		if limit := t.first.Add(t.params.Max); limit.Before(at) {
			at = limit
		}
	}
	if t.params.MinInterval > 0 && !lastRun.IsZero() {
		if next := lastRun.Add(t.params.MinInterval); next.After(at) {
			at = next
		}
	}
	return at, true
}

// take empties the pending burst and returns its reasons.
func (t *Trigger) take() ([]string, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	reasons, folded := t.reasons, t.folded
	t.reasons, t.folded, t.seen = nil, 0, map[string]bool{}
	return reasons, folded
}

func (t *Trigger) run(ctx context.Context, env jobEnv) {
	env.health.OK("idle")
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	var lastRun time.Time
	for {
		if ctx.Err() != nil {
			// Events may still be pending; they are not run after stop.
			env.health.Stopped("stopped with the hive")
			return
		}
		if at, ok := t.due(lastRun); ok {
			if wait := time.Until(at); wait > 0 {
				wake.Reset(wait)
			} else {
				lastRun = time.Now()
				t.fire(ctx, env)
				continue
			}
		}
		select {
		case <-ctx.Done():
			env.health.Stopped("stopped with the hive")
			return
		case <-t.notify:
			wake.Stop()
		case <-wake.C:
		}
	}
}

func (t *Trigger) fire(ctx context.Context, env jobEnv) {
	reasons, folded := t.take()
	if err := t.fn(ctx, reasons); err != nil {
		if ctx.Err() == nil {
			env.log.Warn("Trigger run failed", "reasons", reasons, "error", err)
			env.health.Degraded("last run failed", err)
		}
		return
	}
	env.health.OK(fmt.Sprintf("last run folded %d event(s)", folded))
}
