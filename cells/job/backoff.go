package job

import (
	"context"
	"math"
	"time"
)

// Backoff computes exponential waits between retries.
type Backoff struct {
	// Min is the wait after the first failure (default 1s).
	Min time.Duration
	// Max caps the wait (default 1m, or Min when that is larger).
	Max time.Duration
	// Factor multiplies the wait after each failure (default 2).
	Factor float64
}

// DefaultBackoff waits 1s, 2s, 4s, ... up to 1m.
var DefaultBackoff = Backoff{Min: time.Second, Max: time.Minute, Factor: 2}

// Duration returns the wait after the given number of consecutive failures
// (1 = the first failure).
func (b Backoff) Duration(failures int) time.Duration {
	minD, maxD, factor := b.Min, b.Max, b.Factor
	if minD <= 0 {
		minD = DefaultBackoff.Min
	}
	if maxD <= 0 {
		maxD = max(DefaultBackoff.Max, minD)
	}
	if factor < 1 {
		factor = DefaultBackoff.Factor
	}
	if failures < 1 {
		failures = 1
	}
	d := float64(minD) * math.Pow(factor, float64(failures-1))
	if d > float64(maxD) || math.IsInf(d, 0) {
		return maxD
	}
	return time.Duration(d)
}

// Sleep waits d or until ctx is done; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
