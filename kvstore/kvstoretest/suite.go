package kvstoretest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiary-net/apiary/kvstore"
)

// Subject is what the conformance suite tests: a fresh backend on an
// empty store, and a way to expire the session lease a key was written
// with (as etcd does after a long partition).
type Subject struct {
	Backend     kvstore.Backend
	ExpireLease func(t *testing.T, key string)
}

// RunBackendSuite runs the same tests, with the same expectations,
// against any Backend: the etcd backend on a real server and the
// in-memory one.
func RunBackendSuite(t *testing.T, newSubject func(t *testing.T) Subject) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Subject)
	}{
		{"get-update-list", testGetUpdateList},
		{"update-if-different", testUpdateIfDifferent},
		{"create-only", testCreateOnly},
		{"create-only-race", testCreateOnlyRace},
		{"delete", testDelete},
		{"list-and-watch", testListAndWatch},
		{"lease-expiry", testLeaseExpiry},
		{"lock", testLock},
		{"batch", testBatch},
		{"batch-limits", testBatchLimits},
		{"batch-after-lease-loss", testBatchAfterLeaseLoss},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newSubject(t)) })
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testGetUpdateList(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	v, err := b.Get(ctx, "cilium/state/x/missing")
	if err != nil || v != nil {
		t.Fatalf("Get(missing) = %q, %v; want nil, nil", v, err)
	}
	must(t, b.Update(ctx, "cilium/state/x/a", []byte("1"), false))
	must(t, b.Update(ctx, "cilium/state/x/b", []byte("2"), true))
	must(t, b.Update(ctx, "cilium/state/y/c", []byte("3"), false))
	if v, _ := b.Get(ctx, "cilium/state/x/a"); string(v) != "1" {
		t.Errorf("Get(a) = %q, want 1", v)
	}
	got, err := b.ListPrefix(ctx, "cilium/state/x/")
	must(t, err)
	if len(got) != 2 || string(got["cilium/state/x/a"].Data) != "1" || string(got["cilium/state/x/b"].Data) != "2" {
		t.Errorf("ListPrefix = %v, want a=1 b=2", got)
	}
	if got["cilium/state/x/b"].LeaseID == 0 || got["cilium/state/x/a"].LeaseID != 0 {
		t.Errorf("lease ids: a=%d (want 0), b=%d (want non-zero)", got["cilium/state/x/a"].LeaseID, got["cilium/state/x/b"].LeaseID)
	}
}

func testUpdateIfDifferent(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	for i, step := range []struct {
		value string
		lease bool
		want  bool
	}{
		{"v1", true, true},
		{"v1", true, false},
		{"v2", true, true},
		{"v2", false, true}, // same value, lease dropped
		{"v2", false, false},
	} {
		wrote, err := b.UpdateIfDifferent(ctx, "cilium/state/k", []byte(step.value), step.lease)
		must(t, err)
		if wrote != step.want {
			t.Errorf("step %d: UpdateIfDifferent(%s, lease=%v) wrote=%v, want %v", i, step.value, step.lease, wrote, step.want)
		}
	}
}

func testCreateOnly(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	created, err := b.CreateOnly(ctx, "cilium/state/id/1", []byte("first"), false)
	must(t, err)
	if !created {
		t.Fatal("first CreateOnly did not create")
	}
	created, err = b.CreateOnly(ctx, "cilium/state/id/1", []byte("second"), true)
	must(t, err)
	if created {
		t.Error("second CreateOnly created over an existing key")
	}
	if v, _ := b.Get(ctx, "cilium/state/id/1"); string(v) != "first" {
		t.Errorf("value = %q, want first", v)
	}
}

func testCreateOnlyRace(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			created, err := b.CreateOnly(ctx, "cilium/state/race", fmt.Appendf(nil, "%d", i), false)
			if err != nil {
				t.Error(err)
			}
			if created {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d CreateOnly calls won, want exactly 1", wins.Load())
	}
}

func testDelete(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	for _, k := range []string{"cilium/a/1", "cilium/a/2", "cilium/ab/3", "cilium/b/4"} {
		must(t, b.Update(ctx, k, []byte("x"), true))
	}
	must(t, b.Delete(ctx, "cilium/a/1"))
	must(t, b.Delete(ctx, "cilium/a/never-existed"))
	must(t, b.DeletePrefix(ctx, "cilium/a/"))
	got, err := b.ListPrefix(ctx, "cilium/")
	must(t, err)
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"cilium/ab/3", "cilium/b/4"}) {
		t.Errorf("keys left = %q, want cilium/ab/3 and cilium/b/4", keys)
	}
}

// next reads one event or fails after a timeout.
func next(t *testing.T, ch <-chan kvstore.Event) kvstore.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event channel closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return kvstore.Event{}
}

func expect(t *testing.T, ch <-chan kvstore.Event, typ kvstore.EventType, key, value string) {
	t.Helper()
	ev := next(t, ch)
	if ev.Type != typ || ev.Key != key || (typ != kvstore.EventDelete && !bytes.Equal(ev.Value, []byte(value))) {
		t.Fatalf("event = %s %s %q, want %s %s %q", ev.Type, ev.Key, ev.Value, typ, key, value)
	}
}

func testListAndWatch(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	must(t, b.Update(ctx, "cilium/w/a", []byte("1"), false))
	must(t, b.Update(ctx, "cilium/w/b", []byte("2"), false))
	wctx, cancel := context.WithCancel(ctx)
	ch := b.ListAndWatch(wctx, "cilium/w/")
	first := []kvstore.Event{next(t, ch), next(t, ch)}
	slices.SortFunc(first, func(x, y kvstore.Event) int { return bytes.Compare([]byte(x.Key), []byte(y.Key)) })
	if first[0].Type != kvstore.EventCreate || first[0].Key != "cilium/w/a" || first[1].Key != "cilium/w/b" {
		t.Fatalf("initial events = %+v", first)
	}
	expect(t, ch, kvstore.EventListDone, "", "")
	must(t, b.Update(ctx, "cilium/other", []byte("x"), false)) // not under the prefix
	must(t, b.Update(ctx, "cilium/w/a", []byte("1b"), false))
	must(t, b.Delete(ctx, "cilium/w/b"))
	must(t, b.Update(ctx, "cilium/w/c", []byte("3"), true))
	expect(t, ch, kvstore.EventModify, "cilium/w/a", "1b")
	expect(t, ch, kvstore.EventDelete, "cilium/w/b", "")
	expect(t, ch, kvstore.EventCreate, "cilium/w/c", "3")
	cancel()
	for range ch { // drains, then must be closed
	}
}

func testLeaseExpiry(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	expired := make(chan string, 10)
	b.OnLeaseExpired("cilium/state/nodes/", func(key string) { expired <- key })
	must(t, b.Update(ctx, "cilium/state/nodes/n1", []byte("n1"), true))
	must(t, b.Update(ctx, "cilium/state/other/o1", []byte("o1"), true))
	must(t, b.Update(ctx, "cilium/state/nodes/persistent", []byte("p"), false))
	s.ExpireLease(t, "cilium/state/nodes/n1")
	select {
	case key := <-expired:
		if key != "cilium/state/nodes/n1" {
			t.Errorf("observer got %q, want cilium/state/nodes/n1", key)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("lease observer not called within 10s")
	}
	if v, _ := b.Get(ctx, "cilium/state/nodes/n1"); v != nil {
		t.Errorf("key bound to the expired lease still exists: %q", v)
	}
	if v, _ := b.Get(ctx, "cilium/state/nodes/persistent"); string(v) != "p" {
		t.Errorf("key without lease was removed")
	}
	// Writing again binds the key to a new, live lease.
	must(t, b.Update(ctx, "cilium/state/nodes/n1", []byte("n1"), true))
	if v, _ := b.Get(ctx, "cilium/state/nodes/n1"); string(v) != "n1" {
		t.Errorf("rewrite after expiry: %q", v)
	}
	select {
	case key := <-expired:
		t.Errorf("observer called for %q outside its prefix or twice", key)
	default:
	}
}

func testLock(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	l1, err := b.LockPath(ctx, "cilium/locks/x")
	must(t, err)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := b.LockPath(short, "cilium/locks/x"); err == nil {
		t.Fatal("second LockPath got a held lock")
	}
	got := make(chan kvstore.Unlocker)
	go func() {
		l2, err := b.LockPath(ctx, "cilium/locks/x")
		if err != nil {
			t.Error(err)
		}
		got <- l2
	}()
	must(t, l1.Unlock(ctx))
	select {
	case l2 := <-got:
		must(t, l2.Unlock(ctx))
	case <-time.After(10 * time.Second):
		t.Fatal("waiting LockPath did not get the lock after Unlock")
	}
}
