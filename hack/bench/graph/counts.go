package graph

import "sync/atomic"

// Counts says how much of the graph ran since the last ResetCounts.
type Counts struct {
	Constructed int64 // constructors called
	Started     int64 // start hooks called
	Stopped     int64 // stop hooks called
	Invoked     int64 // invokes of the leaves called
}

var counts struct {
	constructed, started, stopped, invoked atomic.Int64
}

// ReadCounts returns the counts since the last ResetCounts.
func ReadCounts() Counts {
	return Counts{
		Constructed: counts.constructed.Load(),
		Started:     counts.started.Load(),
		Stopped:     counts.stopped.Load(),
		Invoked:     counts.invoked.Load(),
	}
}

// ResetCounts sets all counts to zero.
func ResetCounts() {
	counts.constructed.Store(0)
	counts.started.Store(0)
	counts.stopped.Store(0)
	counts.invoked.Store(0)
}
