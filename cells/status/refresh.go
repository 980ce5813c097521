package status

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/cells/job"
)

// Refresher lets a subsystem whose state just changed have the status
// lines probed again now, instead of at the next ProbeInterval: `apiary
// status` then shows a remote cluster ready as soon as it is.
type Refresher interface {
	// Refresh asks for a probe round soon; it never blocks, and a burst
	// of calls makes one round.
	Refresh()
}

// refreshDelay and refreshMaxDelay coalesce a burst of Refresh calls.
const (
	refreshDelay    = 50 * time.Millisecond
	refreshMaxDelay = 500 * time.Millisecond
)

// refresher is the Refresher: it has no dependency (a provider's
// constructor may ask for it although the collector needs the
// providers); the collector sets its trigger when probing starts.
type refresher struct {
	trigger atomic.Pointer[job.Trigger]
}

var _ Refresher = (*refresher)(nil)

func newRefresher() *refresher { return &refresher{} }

// Refresh implements Refresher; before probing starts it does nothing.
func (r *refresher) Refresh() {
	if t := r.trigger.Load(); t != nil {
		t.Trigger("refresh")
	}
}

// start makes Refresh run probe rounds, in jobs.
func (r *refresher) start(jobs job.Group, probe func(context.Context) error) {
	t := job.NewTrigger("status-refresh", func(ctx context.Context, _ []string) error { return probe(ctx) },
		job.TriggerParams{After: refreshDelay, Max: refreshMaxDelay})
	jobs.Add(t)
	r.trigger.Store(t)
}
