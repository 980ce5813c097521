package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
)

// decodeNode is a Decoder that, like the cluster watchers' decoders,
// returns what it decoded along with the error of a failed check.
func decodeNode(cluster string) store.Decoder[*node] {
	return func(name string, value []byte) (*node, error) {
		var n node
		if err := json.Unmarshal(value, &n); err != nil {
			return nil, fmt.Errorf("%w: %w", store.ErrMalformed, err)
		}
		if n.Name != name {
			return &n, fmt.Errorf("%w: name %q in cluster %s, key %q", store.ErrRefused, n.Name, cluster, name)
		}
		return &n, nil
	}
}

// typedRecorder records a watcher's changes through ObserverOf.
type typedRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *typedRecorder) observer() store.ObserverOf[*node] {
	return store.ObserverOf[*node]{
		Update: func(n *node) { r.add("update " + n.Name + "=" + n.IP) },
		Delete: func(n *node) { r.add("delete " + n.Name) },
	}
}

func (r *typedRecorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *typedRecorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func TestPrefixWatcherPrefix(t *testing.T) {
	tests := []struct {
		name, give, want string
	}{
		{name: "default", give: "", want: "cilium/state/nodes/v1/c1"},
		{name: "override", give: "cilium/cache/nodes/v1/c1", want: "cilium/cache/nodes/v1/c1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := store.WatchParams{Scope: "nodes", Prefix: tt.give}
			w := store.NewPrefixWatcher("cilium/state/nodes/v1/c1", &p, decodeNode("c1"), store.ObserverOf[*node]{})
			if got := w.Prefix(); got != tt.want {
				t.Errorf("Prefix() = %q, want %q", got, tt.want)
			}
			if p.Log == nil {
				t.Error("a nil Log is not set to a discarding logger")
			}
		})
	}
}

// TestPrefixWatcher: the typed observer gets only the entries the
// decoder accepts, a refused entry (returned with its error) and a
// malformed one are skipped and counted by kind, and Drain withdraws
// everything.
func TestPrefixWatcher(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	const prefix = "cilium/cache/nodes/v1/c1"
	must(t, b.Update(ctx(t), prefix+"/a", []byte(jsonNode("a", "10.0.0.1")), false))
	must(t, b.Update(ctx(t), prefix+"/b", []byte(jsonNode("other", "10.0.0.2")), false))
	must(t, b.Update(ctx(t), prefix+"/c", []byte(`{"name":`), false))
	must(t, b.Update(ctx(t), nodesPrefix+"/d", []byte(jsonNode("d", "10.0.0.4")), false)) // the default prefix: not watched

	rec := &typedRecorder{}
	w := store.NewPrefixWatcher(nodesPrefix, &store.WatchParams{Scope: "c1/nodes", Prefix: prefix}, decodeNode("c1"), rec.observer())
	wctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.Watch(wctx, b) })
	defer func() { cancel(); wg.Wait() }()

	celltest.Eventually(t, "first list", func() bool { return w.Store().Synced() })
	must(t, b.Update(ctx(t), prefix+"/e", []byte(jsonNode("e", "10.0.0.5")), false))
	celltest.Eventually(t, "e watched", func() bool { return w.Store().NumEntries() == 2 })
	if got, want := rec.list(), []string{"update a=10.0.0.1", "update e=10.0.0.5"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	if sk := w.Store().SkipStats(); sk.Malformed != 1 || sk.Refused != 1 {
		t.Errorf("skipped: %d malformed, %d refused; want 1 and 1", sk.Malformed, sk.Refused)
	}

	w.Drain()
	got := rec.list()[2:]
	slices.Sort(got)
	if want := []string{"delete a", "delete e"}; !slices.Equal(got, want) || w.Store().NumEntries() != 0 {
		t.Errorf("after Drain: events %q, %d entries; want %q and none", got, w.Store().NumEntries(), want)
	}
}
