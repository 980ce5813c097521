package kvstoretest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apiary-net/apiary/kvstore"
)

func put(key, value string, lease bool) kvstore.Op {
	return kvstore.Op{Key: key, Value: []byte(value), Lease: lease}
}

func del(key string) kvstore.Op { return kvstore.Op{Key: key, Delete: true} }

// resultString formats an OpResult as "wrote prev=x", "kept", "wrote new".
func resultString(r kvstore.OpResult) string {
	switch {
	case !r.Wrote && r.Existed:
		return "kept"
	case !r.Wrote:
		return "absent"
	case r.Existed:
		return "wrote prev=" + string(r.Prev)
	}
	return "wrote new"
}

func testBatch(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	must(t, b.Update(ctx, "cilium/b/same", []byte("v"), true))
	must(t, b.Update(ctx, "cilium/b/old", []byte("old"), true))
	must(t, b.Update(ctx, "cilium/b/unleased", []byte("v"), false))
	must(t, b.Update(ctx, "cilium/b/gone", []byte("g"), false))
	ops := []kvstore.Op{
		put("cilium/b/new", "n", true),
		put("cilium/b/same", "v", true),
		put("cilium/b/old", "new", true),
		put("cilium/b/unleased", "v", true), // same value, lease added
		put("cilium/b/plain", "p", false),
		del("cilium/b/gone"),
		del("cilium/b/never"),
	}
	res, err := b.Batch(ctx, ops)
	must(t, err)
	want := []string{"wrote new", "kept", "wrote prev=old", "wrote prev=v", "wrote new", "wrote prev=g", "absent"}
	if len(res) != len(want) {
		t.Fatalf("%d results for %d ops", len(res), len(ops))
	}
	for i := range want {
		if got := resultString(res[i]); got != want[i] {
			t.Errorf("op %d (%s): %s, want %s", i, ops[i].Key, got, want[i])
		}
	}
	got, err := b.ListPrefix(ctx, "cilium/b/")
	must(t, err)
	wantValues := map[string]string{"cilium/b/new": "n", "cilium/b/same": "v", "cilium/b/old": "new", "cilium/b/unleased": "v", "cilium/b/plain": "p"}
	if len(got) != len(wantValues) {
		t.Errorf("keys after batch = %v, want %v", got, wantValues)
	}
	lease := got["cilium/b/same"].LeaseID
	for k, v := range wantValues {
		if string(got[k].Data) != v {
			t.Errorf("%s = %q, want %q", k, got[k].Data, v)
		}
		if wantLease := k != "cilium/b/plain"; (got[k].LeaseID == lease) != wantLease || lease == 0 {
			t.Errorf("%s lease %d, session lease %d: want bound=%v", k, got[k].LeaseID, lease, wantLease)
		}
	}
	if res, err := b.Batch(ctx, nil); err != nil || len(res) != 0 {
		t.Errorf("empty batch = %v, %v", res, err)
	}
}

func testBatchLimits(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	ops := make([]kvstore.Op, kvstore.MaxBatchOps)
	for i := range ops {
		ops[i] = put(fmt.Sprintf("cilium/l/%03d", i), "x", true)
	}
	res, err := b.Batch(ctx, ops)
	if err != nil || len(res) != len(ops) {
		t.Fatalf("batch of MaxBatchOps (%d) conditional puts: %d results, %v", len(ops), len(res), err)
	}
	got, err := b.ListPrefix(ctx, "cilium/l/")
	must(t, err)
	if len(got) != kvstore.MaxBatchOps {
		t.Errorf("%d keys written, want %d", len(got), kvstore.MaxBatchOps)
	}
	for _, tc := range []struct {
		name string
		ops  []kvstore.Op
	}{
		{"too many", append(ops, put("cilium/l/one-more", "x", true))},
		{"key twice", []kvstore.Op{put("cilium/l/dup", "1", false), del("cilium/l/dup")}},
	} {
		if _, err := b.Batch(ctx, tc.ops); !errors.Is(err, kvstore.ErrInvalidBatch) {
			t.Errorf("%s: err = %v, want ErrInvalidBatch", tc.name, err)
		}
	}
	if v, _ := b.Get(ctx, "cilium/l/dup"); v != nil {
		t.Errorf("a refused batch wrote cilium/l/dup = %q", v)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Batch(cancelled, []kvstore.Op{put("cilium/l/late", "x", false)}); !errors.Is(err, context.Canceled) {
		t.Errorf("batch with a cancelled context: %v, want context.Canceled", err)
	}
}

// testBatchAfterLeaseLoss writes a batch right after the session lease
// was lost, before the keepalive noticed: the batch must land on a live
// lease, and the keys of the lost lease be reported to the observers.
func testBatchAfterLeaseLoss(t *testing.T, s Subject) {
	ctx, b := ctxFor(t), s.Backend
	expired := make(chan string, 10)
	b.OnLeaseExpired("cilium/ll/", func(key string) { expired <- key })
	must(t, b.Update(ctx, "cilium/ll/a", []byte("a"), true))
	s.ExpireLease(t, "cilium/ll/a")
	res, err := b.Batch(ctx, []kvstore.Op{put("cilium/ll/a", "a", true), put("cilium/ll/b", "b", true)})
	must(t, err)
	if !res[0].Wrote || !res[1].Wrote {
		t.Errorf("results %v, want both written", res)
	}
	got, err := b.ListPrefix(ctx, "cilium/ll/")
	must(t, err)
	if len(got) != 2 || got["cilium/ll/a"].LeaseID == 0 || got["cilium/ll/a"].LeaseID != got["cilium/ll/b"].LeaseID {
		t.Errorf("after the batch: %v, want a and b on one live lease", got)
	}
	if key := <-expired; key != "cilium/ll/a" {
		t.Errorf("lease observer got %q, want cilium/ll/a", key)
	}
}
