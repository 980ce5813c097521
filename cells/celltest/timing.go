package celltest

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Clock records the offsets, from its creation, at which something
// happened. In a synctest bubble the offsets are exact.
type Clock struct {
	start time.Time
	mu    sync.Mutex
	at    []time.Duration
}

// NewClock starts a clock now.
func NewClock() *Clock { return &Clock{start: time.Now()} }

// Start returns when the clock was created.
func (c *Clock) Start() time.Time { return c.start }

// Record notes that something happened now and returns how many times
// it has (1 for the first).
func (c *Clock) Record() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = append(c.at, time.Since(c.start))
	return len(c.at)
}

// Times returns the recorded offsets.
func (c *Clock) Times() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.at)
}

// Count returns how many times were recorded.
func (c *Clock) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.at)
}

// Secs turns seconds into durations: Secs(0, 1.5) is [0s 1.5s].
func Secs(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

// WantTimes fails the test unless got equals want.
func WantTimes(t testing.TB, what string, got, want []time.Duration) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s at %v, want %v", what, got, want)
	}
}

// InBubble runs fn as subtest name inside a synctest bubble: time is
// fake and advances only when every goroutine of the bubble is blocked.
func InBubble(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) { synctest.Test(t, fn) })
}
