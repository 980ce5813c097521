package policy

import "context"

// RegenerateFunc regenerates endpoints after policy changes; reasons are
// the distinct changes folded into this run.
type RegenerateFunc func(ctx context.Context, reasons []string) error

// RegenerationRequests are the debounced requests to regenerate
// endpoints after policy changes: policy/policycell implements it, the
// endpoint manager subscribes, and a burst of changes (a directory of
// files, an import) becomes one run.
type RegenerationRequests interface {
	// Request asks for a regeneration; it never blocks.
	Request(reason string)
	// Subscribe adds fn, called once per coalesced burst of requests.
	Subscribe(fn RegenerateFunc)
	// Stats returns how many requests were made and how many runs
	// they were coalesced into.
	Stats() (requests, runs uint64)
}
