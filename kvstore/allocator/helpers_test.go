package allocator_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
)

const base = "cilium/state/identities/v1"

var paths = allocator.Paths{Base: base}

// events records what the cache told.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, s)
}

func (e *events) snapshot() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// agent is one node's allocator on its own backend.
type agent struct {
	*allocator.Allocator[string]
	backend kvstore.Backend
	events  *events
}

type agentOpts struct {
	suffix   string
	min, max allocator.ID
	decode   func(id allocator.ID, key string) (string, error)
}

// startAgent creates an allocator for suffix on a new backend of srv and
// runs it until the test ends.
func startAgent(t *testing.T, srv *kvstoretest.Server, o agentOpts) *agent {
	t.Helper()
	if o.min == 0 {
		o.min, o.max = 256, 65535
	}
	if o.decode == nil {
		o.decode = func(_ allocator.ID, key string) (string, error) { return key, nil }
	}
	b := srv.NewBackend()
	ev := &events{}
	a, err := allocator.New(allocator.Options[string]{
		Backend: b, BasePath: base, Suffix: o.suffix, Min: o.min, Max: o.max,
		Decode: o.decode, Logger: celltest.Logger(t), Scope: "identities",
		Events: allocator.Events[string]{
			Upsert: func(id allocator.ID, v string) { ev.add(fmt.Sprintf("+%d=%s", id, v)) },
			Delete: func(id allocator.ID, v string) { ev.add(fmt.Sprintf("-%d=%s", id, v)) },
			Synced: func() { ev.add("synced") },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	if err := a.WaitForSync(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	return &agent{Allocator: a, backend: b, events: ev}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// get reads a key directly from etcd ("" when missing).
func get(t *testing.T, raw *clientv3.Client, key string) string {
	t.Helper()
	resp, err := raw.Get(ctxFor(t), key)
	must(t, err)
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

func put(t *testing.T, raw *clientv3.Client, key, value string) {
	t.Helper()
	_, err := raw.Put(ctxFor(t), key, value)
	must(t, err)
}

func del(t *testing.T, raw *clientv3.Client, key string) {
	t.Helper()
	_, err := raw.Delete(ctxFor(t), key)
	must(t, err)
}

var errRefused = store.KindError(store.ErrRefused, "refused")
