package bench

import (
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// Median returns the median of xs (the mean of the two middle ones for
// an even count; 0 for none), leaving xs as it is.
func Median[T ~int64 | ~float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 0:
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[n/2]
}

// ProcessCPU returns the process's CPU time so far: user and system
// time of every thread, GC included, to the nanosecond.
func ProcessCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
