package allocator_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// TestGCRemovesUnreferencedMastersOnly: a released key's master goes at
// the second round; referenced masters, masters of another range and
// masters referenced again in between stay.
func TestGCRemovesUnreferencedMastersOnly(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	n1 := startAgent(t, srv, agentOpts{suffix: "n1"})
	n2 := startAgent(t, srv, agentOpts{suffix: "n2"})
	ctx := ctxFor(t)
	kept, _, err := n1.Allocate(ctx, "k8s:app=kept;")
	must(t, err)
	remote, _, err := n2.Allocate(ctx, "k8s:app=remote;")
	must(t, err)
	gone, _, err := n1.Allocate(ctx, "k8s:app=gone;")
	must(t, err)
	revived, _, err := n1.Allocate(ctx, "k8s:app=revived;")
	must(t, err)
	for _, key := range []string{"k8s:app=gone;", "k8s:app=revived;"} {
		if _, err := n1.Release(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	put(t, raw, paths.MasterKey(70000), "k8s:app=other-cluster;") // outside 256..65535

	stats, err := n1.RunGC(ctx)
	must(t, err)
	if stats.Deleted != 0 || stats.Marked != 2 || stats.Alive != 4 {
		t.Errorf("first round = %+v, want 2 marked, none deleted, 4 alive", stats)
	}
	// revived is used again between the rounds.
	if id, _, err := n2.Allocate(ctx, "k8s:app=revived;"); err != nil || id != revived {
		t.Fatalf("re-allocation of revived = %d, %v; want %d", id, err, revived)
	}
	stats, err = n1.RunGC(ctx)
	must(t, err)
	if stats.Deleted != 1 || stats.Alive != 3 {
		t.Errorf("second round = %+v, want 1 deleted, 3 alive", stats)
	}
	for id, want := range map[allocator.ID]string{
		kept: "k8s:app=kept;", remote: "k8s:app=remote;", revived: "k8s:app=revived;",
		gone: "", 70000: "k8s:app=other-cluster;",
	} {
		if got := get(t, raw, paths.MasterKey(id)); got != want {
			t.Errorf("master %d = %q after GC, want %q", id, got, want)
		}
	}
	// The cache follows, so the id of "gone" is free again.
	celltest.Eventually(t, "the cache to drop the collected master", func() bool {
		_, ok := n1.Lookup("k8s:app=gone;")
		return !ok
	})
}

// TestGCOneAgentAtATime: while an agent holds the GC lock, another
// agent's round is skipped.
func TestGCOneAgentAtATime(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	n1 := startAgent(t, srv, agentOpts{suffix: "n1"})
	holder := srv.NewBackend()
	lock, err := holder.LockPath(ctxFor(t), paths.GCLockPath())
	must(t, err)
	stats, err := n1.RunGC(ctxFor(t))
	if err != nil || !stats.Skipped {
		t.Errorf("GC while another agent holds the lock = %+v, %v; want skipped", stats, err)
	}
	must(t, lock.Unlock(ctxFor(t)))
	stats, err = n1.RunGC(ctxFor(t))
	if err != nil || stats.Skipped {
		t.Errorf("GC after the lock was released = %+v, %v", stats, err)
	}
}

// TestInvalidMasterKeys: entries that cannot be decoded, or that Decode
// refuses, are skipped and reported; the rest syncs; their ids are never
// handed out; deleting them clears the report.
func TestInvalidMasterKeys(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	put(t, raw, paths.MasterKey(300), "k8s:app=good;")
	put(t, raw, base+"/id/abc", "k8s:app=bad-name;")
	put(t, raw, base+"/id/0300", "k8s:app=leading-zero;")
	put(t, raw, paths.MasterKey(301), "")
	put(t, raw, paths.MasterKey(302), "refuse-me")
	n1 := startAgent(t, srv, agentOpts{suffix: "n1", min: 300, max: 303,
		decode: func(_ allocator.ID, key string) (string, error) {
			if key == "refuse-me" {
				return "", errRefused
			}
			return key, nil
		}})

	var got []string
	for _, e := range n1.Invalid() {
		got = append(got, strings.TrimPrefix(e.Key, base+"/id/")+" "+string(e.Reason))
	}
	if want := []string{"0300 malformed", "301 malformed", "302 refused", "abc malformed"}; !slices.Equal(got, want) {
		t.Errorf("invalid entries = %v, want %v", got, want)
	}
	if e := n1.Invalid()[2]; !errors.Is(e.Err, errRefused) {
		t.Errorf("302: %v, want Decode's error", e.Err)
	}
	// The observer hears of the sync after the cache has it: wait for
	// the event itself.
	wantEvents := []string{"+300=k8s:app=good;", "synced"}
	celltest.Eventually(t, "the good entry, then synced", func() bool {
		return len(n1.events.snapshot()) >= len(wantEvents)
	})
	if ev := n1.events.snapshot(); !slices.Equal(ev, wantEvents) {
		t.Errorf("events = %v, want only the good entry, then synced", ev)
	}
	if n1.NumEntries() != 1 {
		t.Errorf("NumEntries = %d, want 1", n1.NumEntries())
	}
	// 300, 301 and 302 are taken (even if invalid): only 303 is free.
	id, _, err := n1.Allocate(ctxFor(t), "k8s:app=new;")
	if err != nil || id != 303 {
		t.Errorf("allocation = %d, %v; want 303", id, err)
	}
	del(t, raw, base+"/id/abc")
	celltest.Eventually(t, "the deleted invalid entry to leave the report", func() bool { return len(n1.Invalid()) == 3 })
}

// TestLostReferenceIsWrittenAgain: when the session lease of a reference
// expires, the node writes it again on a new lease.
func TestLostReferenceIsWrittenAgain(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	n1 := startAgent(t, srv, agentOpts{suffix: "n1"})
	id, _, err := n1.Allocate(ctxFor(t), "k8s:app=web;")
	must(t, err)
	valueKey := paths.ValueKey("k8s:app=web;", "n1")
	resp, err := raw.Get(ctxFor(t), valueKey)
	must(t, err)
	oldLease := resp.Kvs[0].Lease
	_, err = raw.Revoke(ctxFor(t), clientv3.LeaseID(oldLease))
	must(t, err)
	celltest.Eventually(t, "the reference to come back on a new lease", func() bool {
		resp, err := raw.Get(context.Background(), valueKey)
		return err == nil && len(resp.Kvs) == 1 && string(resp.Kvs[0].Value) == id.String() && resp.Kvs[0].Lease != oldLease
	})
}

// TestSyncLocalKeysRepairs: a deleted reference and master of a key in
// local use are re-created with the same id.
func TestSyncLocalKeysRepairs(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	n1 := startAgent(t, srv, agentOpts{suffix: "n1"})
	const key = "k8s:app=web;"
	id, _, err := n1.Allocate(ctxFor(t), key)
	must(t, err)
	del(t, raw, paths.ValueKey(key, "n1"))
	del(t, raw, paths.MasterKey(id))
	celltest.Eventually(t, "the cache to see the deletion", func() bool { _, ok := n1.Get(id); return !ok })
	must(t, n1.SyncLocalKeys(ctxFor(t)))
	if get(t, raw, paths.MasterKey(id)) != key || get(t, raw, paths.ValueKey(key, "n1")) != id.String() {
		t.Error("SyncLocalKeys did not restore the master and the reference")
	}
	if got := fmt.Sprint(n1.LocalKeys()); got != fmt.Sprintf("map[%s:%d]", key, id) {
		t.Errorf("LocalKeys = %s", got)
	}
}
