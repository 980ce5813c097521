package celltest

import (
	"testing"
	"time"
)

// EventuallyTimeout is how long Eventually waits by default: long
// enough for a real etcd on a loaded CI machine.
const EventuallyTimeout = 30 * time.Second

// eventuallyPoll is the time between two checks of Eventually.
const eventuallyPoll = 10 * time.Millisecond

// Eventually polls cond until it holds, failing the test with what after
// EventuallyTimeout. It is for state that real components (etcd, the
// kernel) reach asynchronously; use synctest for time-driven logic.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, what, EventuallyTimeout, cond)
}

// EventuallyWithin is Eventually with its own timeout.
func EventuallyWithin(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(eventuallyPoll)
	}
}
