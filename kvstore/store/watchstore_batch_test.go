package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
)

// queuedBackend serves ListAndWatch from events queued before the store
// reads them, then ends the watch: a unit-test backend whose batches do
// not depend on timing.
type queuedBackend struct {
	kvstore.Backend
	events []kvstore.Event
}

func (b queuedBackend) ListAndWatch(context.Context, string) <-chan kvstore.Event {
	ch := make(chan kvstore.Event, len(b.events))
	for _, ev := range b.events {
		ch <- ev
	}
	close(ch)
	return ch
}

// batchRecorder is a BatchObserver that logs each batch.
type batchRecorder struct {
	recorder
	batches [][]string
}

func (r *batchRecorder) OnUpdate(store.Key) { panic("OnUpdate called on a BatchObserver") }
func (r *batchRecorder) OnDelete(store.Key) { panic("OnDelete called on a BatchObserver") }

func (r *batchRecorder) OnChanges(changes []store.Change) {
	var batch []string
	for _, c := range changes {
		if c.Deleted {
			batch = append(batch, "delete "+c.Key.GetKeyName())
		} else {
			batch = append(batch, "update "+c.Key.GetKeyName()+"="+c.Key.(*node).IP)
		}
	}
	r.mu.Lock()
	r.batches = append(r.batches, batch)
	r.mu.Unlock()
}

func TestWatchStoreBatches(t *testing.T) {
	put := func(name, ip string) kvstore.Event {
		return kvstore.Event{Type: kvstore.EventCreate, Key: nodesPrefix + "/" + name, Value: []byte(jsonNode(name, ip))}
	}
	del := func(name string) kvstore.Event {
		return kvstore.Event{Type: kvstore.EventDelete, Key: nodesPrefix + "/" + name}
	}
	listDone := kvstore.Event{Type: kvstore.EventListDone}
	bad := kvstore.Event{Type: kvstore.EventCreate, Key: nodesPrefix + "/bad", Value: []byte(`{`)}

	rec := &batchRecorder{}
	var syncs int
	ws := store.NewWatchStore("nodes", nodeFactory, rec, store.WithOnSync(func(context.Context) { syncs++ }))
	watch := func(events ...kvstore.Event) [][]string {
		rec.batches = nil
		ws.Watch(context.Background(), queuedBackend{events: events}, nodesPrefix)
		return rec.batches
	}

	tests := []struct {
		name string
		give []kvstore.Event
		want [][]string
	}{{
		name: "first list and watch",
		// bad is skipped.
		// A key changed and deleted within a batch arrives in order; the
		// end of the list delivers what came before it on its own.
		give: []kvstore.Event{put("a", "1"), put("b", "2"), put("a", "3"), bad, del("b"), put("b", "4"), put("c", "5"), listDone,
			put("d", "6"), del("c")},
		want: [][]string{{"update a=1", "update b=2", "update a=3", "delete b", "update b=4", "update c=5"}, {"update d=6", "delete c"}},
	}, {
		name: "relist",
		// a unchanged, b changed, d gone: its deletion comes in a batch
		// of its own at the end of the list.
		give: []kvstore.Event{put("a", "3"), put("b", "7"), listDone},
		want: [][]string{{"update b=7"}, {"delete d"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := watch(tt.give...); !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("batches = %q, want %q", got, tt.want)
			}
		})
	}
	// The malformed key was not listed again: no longer skipped.
	if syncs != 1 || ws.NumEntries() != 2 || ws.SkipStats().Total() != 0 {
		t.Errorf("syncs %d, %d entries, %d skipped; want 1, 2, 0", syncs, ws.NumEntries(), ws.SkipStats().Total())
	}
	rec.batches = nil
	ws.Drain()
	if got := rec.batches; len(got) != 1 || len(got[0]) != 2 {
		t.Errorf("Drain: batches %q, want one batch deleting a and b", got)
	}
}
