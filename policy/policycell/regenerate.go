package policycell

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/cells/job"
)

// regenerationDelay is the quiet period after a policy change before
// endpoints regenerate; regenerationMaxDelay bounds it in a busy burst.
const (
	regenerationDelay    = 100 * time.Millisecond
	regenerationMaxDelay = time.Second
)

// RegenerateFunc regenerates endpoints after policy changes; reasons are
// the distinct changes folded into this run.
type RegenerateFunc func(ctx context.Context, reasons []string) error

// RegenerationRequests are the debounced requests to regenerate
// endpoints after policy changes. The endpoint manager subscribes; a
// burst of changes (a directory of files, an import) becomes one run.
type RegenerationRequests interface {
	// Request asks for a regeneration; it never blocks.
	Request(reason string)
	// Subscribe adds fn, called once per coalesced burst of requests.
	Subscribe(fn RegenerateFunc)
	// Stats returns how many requests were made and how many runs
	// they were coalesced into.
	Stats() (requests, runs uint64)
}

// regenerations implements RegenerationRequests with a job.Trigger.
type regenerations struct {
	trigger  *job.Trigger
	log      *slog.Logger
	requests atomic.Uint64
	runs     atomic.Uint64

	mu   sync.Mutex
	subs []RegenerateFunc
}

var _ RegenerationRequests = (*regenerations)(nil)

func newRegenerations(log *slog.Logger) *regenerations {
	r := &regenerations{log: log}
	r.trigger = job.NewTrigger("policy-regenerate", r.run,
		job.TriggerParams{After: regenerationDelay, Max: regenerationMaxDelay})
	return r
}

// Request implements RegenerationRequests.
func (r *regenerations) Request(reason string) {
	r.requests.Add(1)
	r.trigger.Trigger(reason)
}

// Subscribe implements RegenerationRequests.
func (r *regenerations) Subscribe(fn RegenerateFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = append(r.subs, fn)
}

// Stats implements RegenerationRequests.
func (r *regenerations) Stats() (requests, runs uint64) {
	return r.requests.Load(), r.runs.Load()
}

// run is one coalesced burst: it calls every subscriber.
func (r *regenerations) run(ctx context.Context, reasons []string) error {
	runs := r.runs.Add(1)
	requests := r.requests.Load()
	r.mu.Lock()
	subs := append([]RegenerateFunc(nil), r.subs...)
	r.mu.Unlock()
	r.log.Info("Requesting endpoint regeneration", "reasons", reasons,
		"subscribers", len(subs), "requests", requests, "runs", runs, "coalesced", requests-runs)
	var first error
	for _, fn := range subs {
		if err := fn(ctx, reasons); err != nil && first == nil {
			first = err
		}
	}
	return first
}
