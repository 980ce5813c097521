package status

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
)

// entry keeps the probe state of one provider.
type entry struct {
	Provider

	mu         sync.Mutex
	gen        int       // number of probes begun
	inFlight   bool      // a probe is running
	started    time.Time // when the running probe began
	answered   bool      // some probe has answered
	report     Report    // the last answer
	answeredAt time.Time // when the last answer arrived
	duration   time.Duration
	staleSince time.Time // zero unless the running probe is stale
}

// begin marks a probe as started, unless one is already in flight. It
// returns the probe's generation.
func (e *entry) begin(now time.Time) (int, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inFlight {
		return 0, false
	}
	e.gen++
	e.inFlight, e.started = true, now
	return e.gen, true
}

// markStale marks the probe of generation gen as stale if it still runs.
func (e *entry) markStale(gen int, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.inFlight || e.gen != gen || !e.staleSince.IsZero() {
		return false
	}
	e.staleSince = now
	return true
}

// finish records an answer and returns the state of the previous one.
func (e *entry) finish(r Report, now time.Time) (prev State, first bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	prev, first = e.report.State, !e.answered
	e.inFlight, e.answered = false, true
	e.report, e.answeredAt, e.duration = r, now, now.Sub(e.started)
	e.staleSince = time.Time{}
	return prev, first
}

// abort forgets a probe that ended because the collector stops.
func (e *entry) abort() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inFlight = false
}

// view renders the entry for GET /v1/status.
func (e *entry) view(now time.Time) models.StatusEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := models.StatusEntry{Name: e.Name}
	if e.answered {
		at := e.answeredAt
		v.State, v.Message, v.Details = e.report.State, e.report.Message, slices.Clone(e.report.Details)
		v.LastProbe, v.ProbeDuration = &at, models.Duration(e.duration)
	}
	switch {
	case !e.staleSince.IsZero():
		since := e.staleSince
		v.Stale, v.StaleSince = true, &since
		v.State = Failure
		v.Message = fmt.Sprintf("probe stale since %s, no answer for %s",
			since.Format(time.RFC3339), now.Sub(e.started).Round(time.Second))
		v.Details = e.staleDetails()
	case !e.answered:
		v.State, v.Message = Warning, "waiting for the first probe to answer"
	}
	return v
}

// staleDetails keeps the last answer in the details of a stale line.
func (e *entry) staleDetails() []string {
	if !e.answered {
		return []string{"no answer yet"}
	}
	last := fmt.Sprintf("last answer at %s: %s: %s",
		e.answeredAt.Format(time.RFC3339), e.report.State, e.report.Message)
	return append([]string{last}, e.report.Details...)
}
