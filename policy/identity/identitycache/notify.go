package identitycache

import (
	"sync"

	"github.com/apiary-net/apiary/policy/identity"
)

// notifier delivers identity changes to the observers, in the order they
// were queued and in batches. Producers queue under their own locks (so
// the queue order is the order of the changes) and flush after releasing
// them; a flush returns once every change queued before it has been
// delivered, by this flush or by a concurrent one.
type notifier struct {
	observers []identity.Observer

	mu    sync.Mutex
	queue []identity.Change

	deliverMu sync.Mutex
}

func newNotifier(observers []identity.Observer) *notifier {
	n := &notifier{}
	for _, o := range observers {
		if o != nil {
			n.observers = append(n.observers, o)
		}
	}
	return n
}

// enqueue adds changes to the queue.
func (n *notifier) enqueue(changes ...identity.Change) {
	if len(n.observers) == 0 {
		return
	}
	n.mu.Lock()
	n.queue = append(n.queue, changes...)
	n.mu.Unlock()
}

// flush delivers the queued changes. Observers must not allocate or
// release identities from OnIdentitiesChanged.
func (n *notifier) flush() {
	if len(n.observers) == 0 {
		return
	}
	n.deliverMu.Lock()
	defer n.deliverMu.Unlock()
	n.mu.Lock()
	batch := n.queue
	n.queue = nil
	n.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	for _, o := range n.observers {
		o.OnIdentitiesChanged(batch)
	}
}
