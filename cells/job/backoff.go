package job

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Backoff computes exponential waits between retries, with jitter, on
// k8s.io/apimachinery's wait.Backoff. Every retry loop of apiary waits
// with one, so that agents that failed together (an etcd restart) do
// not retry together.
type Backoff struct {
	// Min is the wait after the first failure (default 1s).
	Min time.Duration
	// Max caps the wait before jitter (default 1m, or Min when that is
	// larger).
	Max time.Duration
	// Factor multiplies the wait after each failure (default 2).
	Factor float64
	// Jitter stretches each wait by a random part of up to Jitter times
	// the wait: a wait d is between d and d*(1+Jitter). Zero means
	// DefaultJitter; NoJitter turns it off.
	Jitter float64
}

// DefaultJitter is the jitter of a Backoff that sets none: waits are
// stretched by up to half.
const DefaultJitter = 0.5

// NoJitter in Backoff.Jitter makes every wait exact, for tests that
// check a retry schedule.
const NoJitter = -1

// DefaultBackoff waits 1s, 2s, 4s, ... up to 1m, each stretched by up to
// DefaultJitter.
var DefaultBackoff = Backoff{Min: time.Second, Max: time.Minute, Factor: 2}

// Duration returns the wait after the given number of consecutive failures
// (1 = the first failure): Min*Factor^(failures-1), capped at Max, then
// stretched by the jitter. Each call draws a new jitter.
func (b Backoff) Duration(failures int) time.Duration {
	n := max(failures, 1)
	if b.Factor == 1 {
		n = 1 // every wait is Min
	}
	w := b.wait(n)
	d := w.Step()
	for range n - 1 {
		if w.Steps == 0 {
			return w.Step() // capped early: every later wait is the cap
		}
		d = w.Step()
	}
	return d
}

// wait returns the wait.Backoff of b, its defaults filled in, for the
// given number of steps.
func (b Backoff) wait(steps int) wait.Backoff {
	minD, maxD, factor, jitter := b.Min, b.Max, b.Factor, b.Jitter
	if minD <= 0 {
		minD = DefaultBackoff.Min
	}
	if maxD <= 0 {
		maxD = max(DefaultBackoff.Max, minD)
	}
	if factor < 1 {
		factor = DefaultBackoff.Factor
	}
	switch {
	case jitter == 0:
		jitter = DefaultJitter
	case jitter < 0:
		jitter = 0
	}
	return wait.Backoff{Duration: min(minD, maxD), Factor: factor, Jitter: jitter, Steps: steps, Cap: maxD}
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
