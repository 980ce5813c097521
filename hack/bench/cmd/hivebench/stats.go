package main

import (
	"slices"
	"time"
)

// summary is the median and 90th percentile of some durations.
type summary struct {
	median, p90 time.Duration
}

// summarize returns the median (the mean of the two middle values for an
// even count) and the nearest-rank 90th percentile of ds, which must not
// be empty.
func summarize(ds []time.Duration) summary {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	median := s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	rank := (9*n + 9) / 10 // ceil(0.9 n)
	return summary{median: median, p90: s[rank-1]}
}
