package store_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
)

const guardPrefix = "cilium/state/nodes/v1"

// conflictLog records the conflicts a store reports.
type conflictLog struct {
	mu  sync.Mutex
	all []store.Conflict
}

func (l *conflictLog) add(c store.Conflict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, c)
}

func (l *conflictLog) list() []store.Conflict {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]store.Conflict(nil), l.all...)
}

// startGuarded runs a SyncStore on b that owns c1/n1 = 10.0.0.1 and
// waits until it is written.
func startGuarded(t *testing.T, b kvstore.Backend, opts ...store.SyncStoreOption) (*store.SyncStore, *conflictLog, *store.Metrics) {
	t.Helper()
	log, metrics := &conflictLog{}, store.NewMetrics()
	s := store.NewSyncStore("c1", b, guardPrefix, append([]store.SyncStoreOption{
		store.WithOnConflict(log.add), store.WithSyncMetrics(metrics)}, opts...)...)
	must(t, s.UpsertKey(ctx(t), &node{Name: "c1/n1", IP: "10.0.0.1"}))
	s.Synced(ctx(t))
	runSync(t, s)
	celltest.Eventually(t, "canary", s.IsSynced)
	return s, log, metrics
}

// waitValue polls (bounded) until key holds want.
func waitValue(t *testing.T, b kvstore.Backend, key, want string) {
	t.Helper()
	celltest.Eventually(t, key+" = "+want, func() bool {
		v, err := b.Get(ctx(t), key)
		return err == nil && string(v) == want
	})
}

func TestSyncStoreRestoresDeletedKey(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	s, log, metrics := startGuarded(t, b)
	_, err := srv.Client().Delete(ctx(t), guardPrefix+"/c1/n1")
	must(t, err)
	waitValue(t, b, guardPrefix+"/c1/n1", jsonNode("c1/n1", "10.0.0.1"))
	celltest.Eventually(t, "the conflict report", func() bool { return len(log.list()) == 1 })
	c := log.list()[0]
	if c.Key != guardPrefix+"/c1/n1" || !c.Deleted || c.Value != nil || c.InARow != 1 {
		t.Errorf("conflict = %+v, want a deletion of c1/n1", c)
	}
	if got := s.Conflicts(); len(got) != 1 || got[0].Key != c.Key {
		t.Errorf("Conflicts() = %+v", got)
	}
	if n := testutil.ToFloat64(metrics.Conflicts.WithLabelValues(guardPrefix, "deleted")); n != 1 {
		t.Errorf("deleted conflicts counted %v, want 1", n)
	}
}

func TestSyncStoreRestoresOverwrittenKeyAndReportsIt(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	s, log, metrics := startGuarded(t, b)
	theirs := jsonNode("c1/n1", "10.6.6.6")
	_, err := srv.Client().Put(ctx(t), guardPrefix+"/c1/n1", theirs)
	must(t, err)
	waitValue(t, b, guardPrefix+"/c1/n1", jsonNode("c1/n1", "10.0.0.1"))
	celltest.Eventually(t, "the conflict report", func() bool { return len(s.Conflicts()) == 1 })
	c := s.Conflicts()[0]
	if c.Deleted || string(c.Value) != theirs {
		t.Errorf("conflict = %+v, want the other writer's value %s", c, theirs)
	}
	if got := log.list(); len(got) != 1 || string(got[0].Value) != theirs {
		t.Errorf("OnConflict got %+v", got)
	}
	if n := testutil.ToFloat64(metrics.Conflicts.WithLabelValues(guardPrefix, "changed")); n != 1 {
		t.Errorf("changed conflicts counted %v, want 1", n)
	}
	// A key this store does not own is left alone.
	_, err = srv.Client().Put(ctx(t), guardPrefix+"/c1/other", "x")
	must(t, err)
	s.DeleteKey(ctx(t), &node{Name: "c1/n1"})
	waitValue(t, b, guardPrefix+"/c1/n1", "")
	if v, _ := b.Get(ctx(t), guardPrefix+"/c1/other"); string(v) != "x" || len(s.Conflicts()) != 0 {
		t.Errorf("other key = %q, conflicts %v after the local key was deleted", v, s.Conflicts())
	}
}

// TestSyncStoreFedByWatchStore: with a WatchStore created WithWriter, the
// store needs no watch of its own and still restores its key.
func TestSyncStoreFedByWatchStore(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	rec := &recorder{}
	s := store.NewSyncStore("c1", b, guardPrefix, store.WithPeriodicSync(time.Hour))
	ws := store.NewWatchStore("nodes", nodeFactory, rec, store.WithWriter(s))
	wctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { ws.Watch(wctx, b, guardPrefix+"/c1") })
	defer func() { cancel(); wg.Wait() }()
	must(t, s.UpsertKey(ctx(t), &node{Name: "c1/n1", IP: "10.0.0.1"}))
	runSync(t, s)
	waitValue(t, b, guardPrefix+"/c1/n1", jsonNode("c1/n1", "10.0.0.1"))
	_, err := srv.Client().Put(ctx(t), guardPrefix+"/c1/n1", jsonNode("c1/n1", "10.6.6.6"))
	must(t, err)
	waitValue(t, b, guardPrefix+"/c1/n1", jsonNode("c1/n1", "10.0.0.1"))
	celltest.Eventually(t, "the conflict report", func() bool { return len(s.Conflicts()) == 1 })
}

// TestSyncStorePeriodicSyncRepairs: without any watch (its WatchStore
// never runs), the periodic sync finds and repairs a changed key.
func TestSyncStorePeriodicSyncRepairs(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	s := store.NewSyncStore("c1", b, guardPrefix, store.WithPeriodicSync(100*time.Millisecond))
	store.NewWatchStore("nodes", nodeFactory, &recorder{}, store.WithWriter(s)) // never watches
	must(t, s.UpsertKey(ctx(t), &node{Name: "c1/n1", IP: "10.0.0.1"}))
	runSync(t, s)
	waitValue(t, b, guardPrefix+"/c1/n1", jsonNode("c1/n1", "10.0.0.1"))
	_, err := srv.Client().Put(ctx(t), guardPrefix+"/c1/n1", jsonNode("c1/n1", "10.6.6.6"))
	must(t, err)
	waitValue(t, b, guardPrefix+"/c1/n1", jsonNode("c1/n1", "10.0.0.1"))
	celltest.Eventually(t, "the conflict report", func() bool { return len(s.Conflicts()) == 1 })
}

// TestSyncStoreWritersFightWithoutLoopingHot runs two stores that own the
// same key with different values for an hour of fake time: each keeps
// restoring its value, but backs off (1s doubling to 5m), and reports the
// other's value.
func TestSyncStoreWritersFightWithoutLoopingHot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := kvstoretest.NewMemory()
		var stores []*store.SyncStore
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, ip := range []string{"10.0.0.1", "10.0.0.2"} {
			b := mem.NewBackend()
			defer b.Close()
			s := store.NewSyncStore("c1", b, guardPrefix)
			must(t, s.UpsertKey(ctx, &node{Name: "c1/n1", IP: ip}))
			wg.Go(func() { s.Run(ctx) })
			stores = append(stores, s)
			synctest.Wait()
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		for i, s := range stores {
			other := jsonNode("c1/n1", []string{"10.0.0.2", "10.0.0.1"}[i])
			c := s.Conflicts()
			if len(c) != 1 || string(c[0].Value) != other {
				t.Errorf("store %d: conflicts %+v, want the other's value %s", i, c, other)
				continue
			}
			t.Logf("store %d: %d conflicts, last %+v", i, c[0].Total, c[0].InARow)
			// 1+2+...+256s (9 repairs) take 8.5 minutes, then one per
			// 5 minutes: about 20 in an hour. Hot looping would be thousands.
			if c[0].Total < 10 || c[0].Total > 25 {
				t.Errorf("store %d: %d conflicts in an hour, want 10..25", i, c[0].Total)
			}
		}
		cancel()
		wg.Wait()
	})
}
