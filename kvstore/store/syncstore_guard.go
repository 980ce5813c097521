package store

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/apiary-net/apiary/kvstore"
)

// Conflict is what a SyncStore found when it wrote one of its keys again
// after another writer had deleted it or written another value.
type Conflict struct {
	// Key is the full kvstore key.
	Key string
	// Value is what the other writer had left; nil when the key was
	// deleted (by someone, or with a lease that expired).
	Value []byte
	// Deleted says the key was missing rather than changed.
	Deleted bool
	// InARow counts the conflicts on this key without a quiet period
	// (twice the maximum conflict backoff) between them.
	InARow int
	// Total counts every conflict on this key.
	Total int
	// Time is when the store found it.
	Time time.Time
	// NextRepair is the earliest time the store writes the key again if
	// it is changed again.
	NextRepair time.Time
}

// conflictState is a key's conflict history.
type conflictState struct {
	last   Conflict
	inARow int
	total  int
	next   time.Time // earliest next repair
}

// fedBy marks the store as told about its keys by a WatchStore, so Run
// does not watch them itself.
func (s *SyncStore) fedBy() {
	s.mu.Lock()
	s.fedByWatch = true
	s.mu.Unlock()
}

// watchOwnKeys watches the store's prefix and checks every event.
func (s *SyncStore) watchOwnKeys(ctx context.Context) {
	for ev := range s.backend.ListAndWatch(ctx, s.prefix) {
		s.observe(ev)
	}
}

// observe checks a watch event of the store's prefix: a key it owns that
// was deleted or holds another value is written again (after the key's
// conflict backoff). The end of a list checks every key. A key that only
// lost its lease (its value written again without one) is left to the
// periodic sync: two writers of one value on different leases would
// otherwise rewrite it in turn without ever seeing a conflict.
func (s *SyncStore) observe(ev kvstore.Event) {
	if ev.Type == kvstore.EventListDone {
		s.verifyAll("watch listed")
		return
	}
	name, ok := strings.CutPrefix(ev.Key, s.prefix)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ks, ok := s.keys[name]
	if !ok || !ks.owned || (ev.Type != kvstore.EventDelete && bytes.Equal(ev.Value, ks.want)) {
		return
	}
	switch {
	case ks.queued != nil: // the queued write restores it
	case ks.inflight != nil:
		ks.recheck = true // the write may have landed before this change
	default:
		s.enqueueLocked(name, ks, ks.want, true)
	}
}

// verifyAll queues a repair of every local key that is not being
// written: it writes only where the kvstore differs.
func (s *SyncStore) verifyAll(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, ks := range s.keys {
		switch {
		case !ks.owned || ks.queued != nil:
		case ks.inflight != nil:
			ks.recheck = true
		default:
			s.enqueueLocked(name, ks, ks.want, true)
			n++
		}
	}
	s.log.Debug("Comparing local keys with the kvstore", "scope", s.scope, "reason", why, "keys", n)
}

// recordRepairLocked turns the result of a repair into a conflict when
// it had to write: the key was missing or held another value. A key that
// only had another lease is no conflict.
func (s *SyncStore) recordRepairLocked(op *syncOp, ks *keyState, r kvstore.OpResult, now time.Time) (Conflict, bool) {
	if !r.Wrote || (r.Existed && bytes.Equal(r.Prev, op.value)) {
		return Conflict{}, false
	}
	c := &ks.conflict
	if now.Sub(c.last.Time) > 2*s.conflict.Max {
		c.inARow = 0
	}
	c.inARow++
	c.total++
	c.next = now.Add(s.conflict.Duration(c.inARow))
	s.conflicted[op.name] = ks
	c.last = Conflict{
		Key: s.prefix + op.name, Value: bytes.Clone(r.Prev), Deleted: !r.Existed,
		InARow: c.inARow, Total: c.total, Time: now, NextRepair: c.next,
	}
	kind := "changed"
	if c.last.Deleted {
		kind = "deleted"
	}
	s.metrics.Conflicts.WithLabelValues(s.scope, kind).Inc()
	return c.last, true
}

// maxLoggedValue bounds the part of another writer's value a log shows.
const maxLoggedValue = 256

func (s *SyncStore) reportConflict(c Conflict) {
	if c.Deleted {
		s.log.Warn("Key owned by this agent was deleted (by another writer or with an expired lease), wrote it again",
			"key", c.Key, "in-a-row", c.InARow, "next-repair-after", c.NextRepair.Sub(c.Time))
	} else {
		value := c.Value
		if len(value) > maxLoggedValue {
			value = value[:maxLoggedValue]
		}
		s.log.Warn("Another writer changed a key owned by this agent, wrote it again",
			"key", c.Key, "their-value", string(value), "in-a-row", c.InARow,
			"next-repair-after", c.NextRepair.Sub(c.Time))
	}
	if s.onConflict != nil {
		s.onConflict(c)
	}
}

// Conflicts returns the last conflict of every local key that had one
// within twice the maximum conflict backoff, sorted by key.
func (s *SyncStore) Conflicts() []Conflict {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var out []Conflict
	for name, ks := range s.conflicted {
		if now.Sub(ks.conflict.last.Time) > 2*s.conflict.Max {
			delete(s.conflicted, name) // quiet long enough: forgotten
			continue
		}
		out = append(out, ks.conflict.last)
	}
	slices.SortFunc(out, func(a, b Conflict) int { return strings.Compare(a.Key, b.Key) })
	return out
}
