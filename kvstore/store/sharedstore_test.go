package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
)

func join(t *testing.T, b kvstore.Backend, rec store.Observer) *store.SharedStore {
	t.Helper()
	s, err := store.JoinSharedStore(ctx(t), store.SharedStoreConfig{
		Backend: b, Prefix: nodesPrefix, KeyFactory: nodeFactory, Observer: rec,
		SynchronizationInterval: 200 * time.Millisecond,
	})
	must(t, err)
	t.Cleanup(s.Close)
	return s
}

func TestSharedStoreBetweenTwoAgents(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b1, b2 := srv.NewBackend(), srv.NewBackend()
	rec1, rec2 := &recorder{}, &recorder{}
	s1, s2 := join(t, b1, rec1), join(t, b2, rec2)
	must(t, s1.UpdateLocalKeySync(ctx(t), &node{Name: "n1", IP: "10.0.0.1"}))
	must(t, s2.UpdateLocalKeySync(ctx(t), &node{Name: "n2", IP: "10.0.0.2"}))
	celltest.Eventually(t, "both agents see both keys", func() bool {
		return len(s1.SharedKeys()) == 2 && len(s2.SharedKeys()) == 2
	})

	// Someone deletes agent 1's key: it comes back at once.
	raw := srv.Client()
	_, err := raw.Delete(ctx(t), nodesPrefix+"/n1")
	must(t, err)
	celltest.Eventually(t, "n1 re-created", func() bool {
		v, _ := b2.Get(ctx(t), nodesPrefix+"/n1")
		return v != nil
	})

	// Agent 2 leaves its key behind on purpose.
	must(t, s2.DeleteLocalKey(ctx(t), &node{Name: "n2"}))
	celltest.Eventually(t, "agent 1 sees n2 go", func() bool { _, ok := s1.SharedKeys()["n2"]; return !ok })
}

func TestSharedStorePeriodicSyncRepairsValue(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	s := join(t, b, &recorder{})
	must(t, s.UpdateLocalKeySync(ctx(t), &node{Name: "n1", IP: "10.0.0.1"}))
	raw := srv.Client()
	_, err := raw.Put(ctx(t), nodesPrefix+"/n1", jsonNode("n1", "6.6.6.6"))
	must(t, err)
	celltest.Eventually(t, "periodic sync rewrote the value", func() bool {
		v, _ := b.Get(ctx(t), nodesPrefix+"/n1")
		return string(v) == jsonNode("n1", "10.0.0.1")
	})
}

func TestSharedStoreInitialListTimeout(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	srv.Partition()
	_, err := store.JoinSharedStore(ctx(t), store.SharedStoreConfig{
		Backend: b, Prefix: nodesPrefix, KeyFactory: nodeFactory, Observer: &recorder{},
		InitialListTimeout: 300 * time.Millisecond,
	})
	if !errors.Is(err, store.ErrInitialListTimeout) {
		t.Errorf("JoinSharedStore = %v, want ErrInitialListTimeout", err)
	}
}

func TestWatchStoreManagerWaitsForCanary(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	mgr := store.NewWatchStoreManagerSync(b, "c2", nil)
	started := make(chan string, 2)
	for _, p := range []string{"cilium/state/nodes/v1", "cilium/state/ip/v1/default"} {
		mgr.Register(p, func(ctx context.Context) { started <- p; <-ctx.Done() })
	}
	c, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { mgr.Run(c) })
	defer func() { cancel(); wg.Wait() }()

	select {
	case p := <-started:
		t.Fatalf("watcher for %s started without a canary", p)
	case <-time.After(300 * time.Millisecond):
	}
	must(t, b.Update(ctx(t), "cilium/synced/c2/cilium/state/ip/v1/default", []byte(time.Now().Format(time.RFC3339)), false))
	select {
	case p := <-started:
		if p != "cilium/state/ip/v1/default" {
			t.Errorf("started %s, want the ip prefix", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watcher not started after its canary appeared")
	}
	select {
	case p := <-started:
		t.Errorf("watcher for %s started without its canary", p)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestWatchStoreManagerImmediate(t *testing.T) {
	mgr := store.NewWatchStoreManagerImmediate()
	started := make(chan string, 2)
	for _, p := range []string{"a", "b"} {
		mgr.Register(p, func(ctx context.Context) { started <- p; <-ctx.Done() })
	}
	c, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { mgr.Run(c) })
	got := map[string]bool{<-started: true, <-started: true}
	cancel()
	wg.Wait()
	if !got["a"] || !got["b"] {
		t.Errorf("started %v, want a and b at once", got)
	}
}
