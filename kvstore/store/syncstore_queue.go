package store

import (
	"container/heap"
	"time"
)

// keyState is what a SyncStore knows about one key. A key has at most one
// queued op (later changes are merged into it) and at most one in flight.
type keyState struct {
	owned    bool    // upserted and not deleted since
	want     []byte  // the value it should hold, when owned
	queued   *syncOp // the next write, not dispatched yet
	inflight *syncOp // the write being done
	recheck  bool    // it changed in the kvstore while a write was in flight
	conflict conflictState
}

// syncOp is one write of a key: a conditional put or a delete.
type syncOp struct {
	name      string
	value     []byte // nil: delete
	repair    bool   // restores the key after another writer changed it
	seq       uint64 // the first change it carries
	notBefore time.Time
	failures  int
	solo      bool // written alone: the batch it was in failed
	where     opPlace
	index     int // in the delay heap
}

// opPlace says where a queued op waits.
type opPlace int

const (
	placeNone    opPlace = iota // waits for the key's in-flight write
	placeReady                  // due: in the ready list
	placeDelayed                // in the delay heap until notBefore
)

// state returns the key's state, creating it.
func (s *SyncStore) state(name string) *keyState {
	ks, ok := s.keys[name]
	if !ok {
		ks = &keyState{}
		s.keys[name] = ks
	}
	return ks
}

// enqueueLocked queues a write of value (nil: delete) for the key, merged
// into the one already queued. A repair is not queued when a write is
// queued already (it restores the key anyway), and waits for the key's
// conflict backoff.
func (s *SyncStore) enqueueLocked(name string, ks *keyState, value []byte, repair bool) {
	s.seq++
	if op := ks.queued; op != nil {
		if repair {
			return
		}
		op.value, op.repair, op.failures, op.solo, op.notBefore = value, false, 0, false, time.Time{}
		if op.where == placeDelayed {
			heap.Remove(&s.queue.delayed, op.index)
			op.where = placeNone
			s.queue.push(op, time.Now())
		}
	} else {
		op := &syncOp{name: name, value: value, repair: repair, seq: s.seq}
		if repair {
			op.notBefore = ks.conflict.next
		}
		ks.queued = op
		if ks.inflight == nil {
			s.queue.push(op, time.Now())
		}
	}
	s.touch(name, ks)
	s.queueSize.Set(float64(len(s.active)))
	s.signal()
}

// touch keeps the active set and the key map in step with a key's state:
// a key neither owned nor being written is forgotten.
func (s *SyncStore) touch(name string, ks *keyState) {
	if ks.queued != nil || ks.inflight != nil {
		s.active[name] = ks
		return
	}
	delete(s.active, name)
	if !ks.owned {
		delete(s.keys, name)
		delete(s.conflicted, name)
	}
}

// next takes the ops of the next write request: due ops in queue order,
// up to the batch limits, or one op that must be written alone. It also
// returns how long until a delayed op is due (0: none is).
func (s *SyncStore) next() ([]*syncOp, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.queue.promoteDue(now)
	var batch []*syncOp
	size := 0
	for len(batch) < s.maxOps {
		op := s.queue.peek()
		if op == nil {
			break
		}
		alone := op.solo || op.name == canaryName
		n := len(s.prefix) + len(op.name) + len(op.value)
		if len(batch) > 0 && (alone || size+n > s.maxBytes) {
			break
		}
		s.queue.pop()
		ks := s.keys[op.name]
		ks.queued, ks.inflight = nil, op
		batch = append(batch, op)
		size += n
		if alone {
			break
		}
	}
	return batch, s.queue.wait(now)
}

// opQueue holds the queued ops: the due ones in arrival order, the
// delayed ones (retries, repairs in conflict backoff) by due time.
type opQueue struct {
	ready   []*syncOp
	delayed delayHeap
}

// push places an op that is in neither list.
func (q *opQueue) push(op *syncOp, now time.Time) {
	if op.notBefore.After(now) {
		heap.Push(&q.delayed, op)
		return
	}
	op.where = placeReady
	q.ready = append(q.ready, op)
}

// promoteDue moves the delayed ops that are due to the ready list.
func (q *opQueue) promoteDue(now time.Time) {
	for len(q.delayed) > 0 && !q.delayed[0].notBefore.After(now) {
		op := heap.Pop(&q.delayed).(*syncOp)
		op.where = placeReady
		q.ready = append(q.ready, op)
	}
}

func (q *opQueue) peek() *syncOp {
	if len(q.ready) == 0 {
		return nil
	}
	return q.ready[0]
}

func (q *opQueue) pop() {
	q.ready[0].where = placeNone
	q.ready[0] = nil
	q.ready = q.ready[1:]
}

// wait returns how long until the first delayed op is due (0: none).
func (q *opQueue) wait(now time.Time) time.Duration {
	if len(q.delayed) == 0 {
		return 0
	}
	return max(q.delayed[0].notBefore.Sub(now), time.Millisecond)
}

// delayHeap is a min-heap of ops by notBefore.
type delayHeap []*syncOp

func (h delayHeap) Len() int           { return len(h) }
func (h delayHeap) Less(i, j int) bool { return h[i].notBefore.Before(h[j].notBefore) }
func (h delayHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *delayHeap) Push(x any) {
	op := x.(*syncOp)
	op.index, op.where = len(*h), placeDelayed
	*h = append(*h, op)
}

func (h *delayHeap) Pop() any {
	old := *h
	op := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	op.where, op.index = placeNone, -1
	return op
}
