package kvstoretest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/kvstore"
)

// memWatch is one ListAndWatch of a MemoryBackend. Events are queued
// under the store's lock and delivered by the watch's goroutine, so
// writers never block on a slow reader.
type memWatch struct {
	prefix string
	queue  []kvstore.Event
	wake   chan struct{}
}

func (w *memWatch) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// ListAndWatch implements kvstore.Backend.
func (b *MemoryBackend) ListAndWatch(ctx context.Context, prefix string) <-chan kvstore.Event {
	out := make(chan kvstore.Event)
	w := &memWatch{prefix: prefix, wake: make(chan struct{}, 1)}
	b.m.mu.Lock()
	keys := make([]string, 0)
	for k := range b.m.data {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.queue = append(w.queue, kvstore.Event{Type: kvstore.EventCreate, Key: k, Value: bytes.Clone(b.m.data[k].data)})
	}
	w.queue = append(w.queue, kvstore.Event{Type: kvstore.EventListDone})
	b.m.watchers[w] = struct{}{}
	b.m.mu.Unlock()
	w.signal()

	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(out)
		defer func() {
			b.m.mu.Lock()
			delete(b.m.watchers, w)
			b.m.mu.Unlock()
		}()
		b.deliver(ctx, w, out)
	}()
	return out
}

func (b *MemoryBackend) deliver(ctx context.Context, w *memWatch, out chan<- kvstore.Event) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.done:
			return
		case <-w.wake:
		}
		for {
			b.m.mu.Lock()
			if len(w.queue) == 0 {
				b.m.mu.Unlock()
				break
			}
			ev := w.queue[0]
			w.queue = w.queue[1:]
			b.m.mu.Unlock()
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			case <-b.done:
				return
			}
		}
	}
}

// LockPath implements kvstore.Backend with an in-process mutex per path.
func (b *MemoryBackend) LockPath(ctx context.Context, path string) (kvstore.Unlocker, error) {
	for {
		b.m.mu.Lock()
		held, ok := b.m.locks[path]
		if !ok {
			b.m.locks[path] = make(chan struct{})
			b.m.mu.Unlock()
			return &memLock{m: b.m, path: path}, nil
		}
		b.m.mu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		}
	}
}

type memLock struct {
	m    *Memory
	path string
}

func (l *memLock) Unlock(context.Context) error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if ch, ok := l.m.locks[l.path]; ok {
		close(ch)
		delete(l.m.locks, l.path)
	}
	return nil
}
