package bench

import (
	"slices"
	"syscall"
	"time"
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
// time of every thread (getrusage, microseconds).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
