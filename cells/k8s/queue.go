package k8s

import "sync"

// queue is an unbounded FIFO that an informer's handler pushes to without
// ever blocking; a subscriber's goroutine pops from it.
type queue[E any] struct {
	mu     sync.Mutex
	items  []E
	closed bool
	signal chan struct{} // has a value when items may be non-empty
}

func newQueue[E any]() *queue[E] {
	return &queue[E]{signal: make(chan struct{}, 1)}
}

// push appends e; it is dropped after close.
func (q *queue[E]) push(e E) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.items = append(q.items, e)
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take removes and returns everything queued.
func (q *queue[E]) take() []E {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

// close drops what is queued and everything pushed later.
func (q *queue[E]) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.items = nil
}
