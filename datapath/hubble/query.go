package hubble

import (
	"errors"
	"fmt"
	"time"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
)

// query is a validated GetFlowsRequest.
type query struct {
	number       uint64
	first        bool
	follow       bool
	since, until *time.Time
	allow, deny  Filter
}

func newQuery(req *observer.GetFlowsRequest) (*query, error) {
	q := &query{number: req.GetNumber(), first: req.GetFirst(), follow: req.GetFollow()}
	if q.first && q.follow {
		return nil, errors.New("first and follow cannot be combined")
	}
	var err error
	if q.allow, err = CompileFilters(req.GetWhitelist()); err != nil {
		return nil, fmt.Errorf("whitelist: %w", err)
	}
	if q.deny, err = CompileFilters(req.GetBlacklist()); err != nil {
		return nil, fmt.Errorf("blacklist: %w", err)
	}
	if ts := req.GetSince(); ts != nil {
		if err := ts.CheckValid(); err != nil {
			return nil, fmt.Errorf("since: %w", err)
		}
		t := ts.AsTime()
		q.since = &t
	}
	if ts := req.GetUntil(); ts != nil {
		if err := ts.CheckValid(); err != nil {
			return nil, fmt.Errorf("until: %w", err)
		}
		t := ts.AsTime()
		q.until = &t
	}
	if q.since != nil && q.until != nil && q.until.Before(*q.since) {
		return nil, fmt.Errorf("until (%s) is before since (%s)", q.until, q.since)
	}
	return q, nil
}

// wants reports whether f passes the filters and the since bound.
func (q *query) wants(f *flow.Flow) bool {
	if q.since != nil && f.GetTime().AsTime().Before(*q.since) {
		return false
	}
	return Allows(q.allow, q.deny, f)
}
