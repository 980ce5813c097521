package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
)

const nodesPrefix = "cilium/state/nodes/v1/c1"

func TestWatchStoreSyncsAndSkipsMalformed(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	must(t, b.Update(ctx(t), nodesPrefix+"/a", []byte(jsonNode("a", "10.0.0.1")), false))
	must(t, b.Update(ctx(t), nodesPrefix+"/bad", []byte(`{"name":`), false))
	must(t, b.Update(ctx(t), nodesPrefix+"/b", []byte(jsonNode("b", "10.0.0.2")), false))

	rec := &recorder{}
	metrics := store.NewMetrics()
	synced := make(chan struct{})
	ws := store.NewWatchStore("nodes", nodeFactory, rec, store.WithMetrics(metrics),
		store.WithOnSync(func(context.Context) { close(synced) }))
	wctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { ws.Watch(wctx, b, nodesPrefix) })
	defer func() { cancel(); wg.Wait() }()

	<-synced
	rec.waitEvents(t, "update a=10.0.0.1", "update b=10.0.0.2")
	if !ws.Synced() || ws.NumEntries() != 2 {
		t.Errorf("Synced=%v NumEntries=%d, want true and 2", ws.Synced(), ws.NumEntries())
	}
	if n := testutil.ToFloat64(metrics.Skipped.WithLabelValues("nodes", "malformed")); n != 1 {
		t.Errorf("malformed counter = %v, want 1", n)
	}

	rec.reset()
	must(t, b.Update(ctx(t), nodesPrefix+"/a", []byte(jsonNode("a", "10.0.0.1")), false)) // identical
	must(t, b.Update(ctx(t), nodesPrefix+"/a", []byte(`not json`), false))                // malformed: keep old
	must(t, b.Update(ctx(t), nodesPrefix+"/b", []byte(jsonNode("b", "10.0.0.20")), false))
	must(t, b.Delete(ctx(t), nodesPrefix+"/a"))
	rec.waitEvents(t, "update b=10.0.0.20", "delete a")
}

func TestWatchStoreRestartDeletesStaleKeys(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	for _, n := range []string{"a", "b", "c"} {
		must(t, b.Update(ctx(t), nodesPrefix+"/"+n, []byte(jsonNode(n, "10.0.0.1")), false))
	}
	rec := &recorder{}
	ws := store.NewWatchStore("nodes", nodeFactory, rec)
	run := func() (stop func()) {
		wctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { ws.Watch(wctx, b, nodesPrefix) })
		return func() { cancel(); wg.Wait() }
	}
	stop := run()
	celltest.Eventually(t, "first sync", func() bool { return ws.NumEntries() == 3 })
	stop()

	// While nobody watches: b goes away, c changes, d appears.
	must(t, b.Delete(ctx(t), nodesPrefix+"/b"))
	must(t, b.Update(ctx(t), nodesPrefix+"/c", []byte(jsonNode("c", "10.0.0.3")), false))
	must(t, b.Update(ctx(t), nodesPrefix+"/d", []byte(jsonNode("d", "10.0.0.4")), false))
	rec.reset()
	stop = run()
	defer stop()
	// Updates come during the list (sorted by key), the stale delete after it.
	rec.waitEvents(t, "update c=10.0.0.3", "update d=10.0.0.4", "delete b")

	rec.reset()
	ws.Drain()
	got := rec.list()
	if len(got) != 3 || ws.NumEntries() != 0 {
		t.Errorf("Drain: events %q, %d entries left; want 3 deletes and none left", got, ws.NumEntries())
	}
}

// TestWatchStoreNamesOnly: a store created WithNamesOnly hands the
// observer decoded keys on updates, and removed keys as their names.
func TestWatchStoreNamesOnly(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	must(t, b.Update(ctx(t), nodesPrefix+"/a", []byte(jsonNode("a", "10.0.0.1")), false))
	var mu sync.Mutex
	var deleted []store.Key
	rec := &recorder{}
	obs := store.ObserverFuncs{Update: rec.OnUpdate, Delete: func(k store.Key) {
		mu.Lock()
		defer mu.Unlock()
		deleted = append(deleted, k)
	}}
	ws := store.NewWatchStore("nodes", nodeFactory, obs, store.WithNamesOnly())
	wctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { ws.Watch(wctx, b, nodesPrefix) })
	defer func() { cancel(); wg.Wait() }()
	rec.waitEvents(t, "update a=10.0.0.1")
	if k, ok := ws.Get("a"); !ok || k != store.NameKey("a") {
		t.Errorf("Get(a) = %v, %t; want NameKey a", k, ok)
	}
	must(t, b.Delete(ctx(t), nodesPrefix+"/a"))
	celltest.Eventually(t, "delete of a", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(deleted) == 1
	})
	if deleted[0] != store.NameKey("a") {
		t.Errorf("deleted key = %#v, want NameKey a", deleted[0])
	}
}
