package policycell

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/policy"
)

// regenerationDelay is the quiet period after a policy change before
// endpoints regenerate; regenerationMaxDelay bounds it in a busy burst.
const (
	regenerationDelay    = 100 * time.Millisecond
	regenerationMaxDelay = time.Second
)

// regenerations implements RegenerationRequests with a job.Trigger.
type regenerations struct {
	trigger  *job.Trigger
	log      *slog.Logger
	requests atomic.Uint64
	runs     atomic.Uint64

	mu   sync.Mutex
	subs []policy.RegenerateFunc
}

var _ policy.RegenerationRequests = (*regenerations)(nil)

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
func (r *regenerations) Subscribe(fn policy.RegenerateFunc) {
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
	subs := append([]policy.RegenerateFunc(nil), r.subs...)
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
