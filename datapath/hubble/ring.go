package hubble

import (
	"context"
	"fmt"
	"sync"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
)

// DefaultCapacity is Hubble's default ring size (--hubble-event-buffer-capacity).
const DefaultCapacity = 4095

// CheckCapacity reports whether n is a valid ring size: a power of two
// minus one, between 1 and 65535, as Cilium requires.
func CheckCapacity(n int) error {
	if n < 1 || n > 1<<16-1 || (n+1)&n != 0 {
		return fmt.Errorf("%d is not a power of two minus one between 1 and 65535 (e.g. 4095)", n)
	}
	return nil
}

// Entry is one element of the ring: a flow, or a count of events lost
// before it (Lost > 0, with the lost events' source).
type Entry struct {
	Flow       *flow.Flow
	Lost       uint64
	LostSource flow.LostEventSource
}

// Ring keeps the last Capacity entries. One writer, many readers; a
// reader that falls more than Capacity behind loses the overwritten
// entries and is told how many.
type Ring struct {
	mu      sync.Mutex
	buf     []Entry
	next    uint64        // sequence number of the next write
	flows   uint64        // flows written (seen)
	wake    chan struct{} // closed at the next write
	stopped bool
}

// NewRing returns an empty ring of capacity entries (CheckCapacity).
func NewRing(capacity int) *Ring {
	return &Ring{buf: make([]Entry, capacity), wake: make(chan struct{})}
}

// Capacity is the number of entries the ring keeps.
func (r *Ring) Capacity() int { return len(r.buf) }

// Write appends e, overwriting the oldest entry when full, and wakes the
// followers. A write after Stop (the consumer's last event racing the
// stop) is kept and wakes nobody.
func (r *Ring) Write(e Entry) {
	r.mu.Lock()
	r.buf[r.next%uint64(len(r.buf))] = e
	r.next++
	if e.Flow != nil {
		r.flows++
	}
	if r.stopped { // r.wake is closed for good: followers are awake
		r.mu.Unlock()
		return
	}
	wake := r.wake
	r.wake = make(chan struct{})
	r.mu.Unlock()
	close(wake)
}

// Stop wakes every follower for good: Next returns ErrRingStopped once
// it has handed out what is left.
func (r *Ring) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.stopped = true
		close(r.wake)
	}
}

// Counts returns the number of flows the ring holds and has seen.
func (r *Ring) Counts() (held, seen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return min(r.flows, uint64(len(r.buf)), r.next), r.flows
}

// Bounds returns the sequence numbers of the oldest entry held and of the
// next write.
func (r *Ring) Bounds() (oldest, next uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.oldestLocked(), r.next
}

func (r *Ring) oldestLocked() uint64 {
	if r.next < uint64(len(r.buf)) {
		return 0
	}
	return r.next - uint64(len(r.buf))
}

// ErrRingStopped is returned by Next once the ring has stopped.
var ErrRingStopped = fmt.Errorf("hubble ring stopped")

// Next returns the entry of sequence number seq and the sequence number
// after it. If seq was overwritten it returns a lost entry counting the
// overwritten ones (source HUBBLE_RING_BUFFER) and the oldest held. With
// wait it blocks until seq is written (or ctx ends, or the ring stops);
// without, ok is false when seq is not written yet.
func (r *Ring) Next(ctx context.Context, seq uint64, wait bool) (e Entry, after uint64, ok bool, err error) {
	for {
		r.mu.Lock()
		oldest, next, wake, stopped := r.oldestLocked(), r.next, r.wake, r.stopped
		switch {
		case seq < oldest:
			r.mu.Unlock()
			return Entry{Lost: oldest - seq, LostSource: flow.LostEventSource_HUBBLE_RING_BUFFER}, oldest, true, nil
		case seq < next:
			e = r.buf[seq%uint64(len(r.buf))]
			r.mu.Unlock()
			return e, seq + 1, true, nil
		}
		r.mu.Unlock()
		if stopped {
			return Entry{}, seq, false, ErrRingStopped
		}
		if !wait {
			return Entry{}, seq, false, nil
		}
		select {
		case <-ctx.Done():
			return Entry{}, seq, false, ctx.Err()
		case <-wake:
		}
	}
}

// At returns the entry of sequence number seq, if the ring holds it.
func (r *Ring) At(seq uint64) (Entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq < r.oldestLocked() || seq >= r.next {
		return Entry{}, false
	}
	return r.buf[seq%uint64(len(r.buf))], true
}
