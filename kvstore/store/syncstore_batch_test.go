package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
)

const batchPrefix = "cilium/state/ip/v1/batch"

// fixedNode returns a node whose op has the same size for every i < 1000.
func fixedNode(i int) *node {
	return &node{Name: fmt.Sprintf("k%03d", i), IP: fmt.Sprintf("10.0.%d.%d", i/256+100, i%256+100)}
}

// batchSizes returns how many keys under prefix share each mod revision
// (keys written by one transaction share one), largest first, and the
// leases they are bound to.
func batchSizes(t *testing.T, raw *clientv3.Client, prefix string) (sizes []int, leases map[int64]bool) {
	t.Helper()
	resp, err := raw.Get(ctx(t), prefix, clientv3.WithPrefix())
	must(t, err)
	revs := map[int64]int{}
	leases = map[int64]bool{}
	for _, kv := range resp.Kvs {
		revs[kv.ModRevision]++
		leases[kv.Lease] = true
	}
	for _, n := range revs {
		sizes = append(sizes, n)
	}
	slices.SortFunc(sizes, func(a, b int) int { return b - a })
	return sizes, leases
}

func TestSyncStoreWritesInBatches(t *testing.T) {
	opSize := len(batchPrefix+"/") + len(fixedNode(0).Name) + len(jsonNode(fixedNode(0).Name, fixedNode(0).IP))
	tests := []struct {
		name string
		opts []store.SyncStoreOption
		want []int
	}{
		{"default", nil, []int{126, 126, 48}},
		{"at most 100 keys", []store.SyncStoreOption{store.WithMaxBatch(100, 1<<20)}, []int{100, 100, 100}},
		{"at most 60 keys' bytes", []store.SyncStoreOption{store.WithMaxBatch(126, 60*opSize)}, []int{60, 60, 60, 60, 60}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := kvstoretest.StartServer(t)
			b := srv.NewBackend()
			s := store.NewSyncStore("c1", b, batchPrefix, tc.opts...)
			for i := range 300 {
				must(t, s.UpsertKey(ctx(t), fixedNode(i)))
			}
			s.Synced(ctx(t))
			runSync(t, s)
			celltest.Eventually(t, "canary", s.IsSynced)
			raw := srv.Client()
			sizes, leases := batchSizes(t, raw, batchPrefix+"/")
			if !slices.Equal(sizes, tc.want) {
				t.Errorf("keys per transaction = %v, want %v", sizes, tc.want)
			}
			canary, err := raw.Get(ctx(t), s.CanaryKey())
			must(t, err)
			if len(leases) != 1 || leases[0] || len(canary.Kvs) != 1 || !leases[canary.Kvs[0].Lease] {
				t.Errorf("keys bound to leases %v, canary %v: want one session lease for all", leases, canary.Kvs)
			}
		})
	}
}

// TestSyncStoreKeepsOrderPerKey changes one key many times among other
// keys' changes, with several batches in flight: etcd must see its values
// in the order they were given (some skipped by coalescing, none
// reordered) and end with the last.
func TestSyncStoreKeepsOrderPerKey(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	hotKey := batchPrefix + "/hot"
	watch := raw.Watch(ctx(t), hotKey)
	// Random delays before each request make concurrent requests reach
	// etcd in another order than they were sent.
	jittery := &jitterBackend{Backend: srv.NewBackend(), watched: hotKey, sent: make(chan struct{}, 1)}
	s := store.NewSyncStore("c1", jittery, batchPrefix, store.WithWorkers(8), store.WithMaxBatch(16, 1<<20))
	runSync(t, s)
	var given []string // "put <ip>" or "delete"
	for i := range 300 {
		if i%2 == 1 { // let the key be in flight while it changes again
			select {
			case <-jittery.sent:
			case <-time.After(10 * time.Second):
				t.Fatal("the key was not written within 10s")
			}
		}
		if i%97 == 50 {
			s.DeleteKey(ctx(t), &node{Name: "hot"})
			given = append(given, "delete")
		} else {
			ip := fmt.Sprintf("10.1.%d.%d", i/256, i%256)
			must(t, s.UpsertKey(ctx(t), &node{Name: "hot", IP: ip}))
			given = append(given, "put "+ip)
		}
		must(t, s.UpsertKey(ctx(t), fixedNode(i)))
	}
	last := given[len(given)-1]
	var seen []string
	timeout := time.After(20 * time.Second)
	for len(seen) == 0 || seen[len(seen)-1] != last {
		select {
		case resp := <-watch:
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypeDelete {
					seen = append(seen, "delete")
					continue
				}
				var n node
				must(t, jsonUnmarshal(ev.Kv.Value, &n))
				seen = append(seen, "put "+n.IP)
			}
		case <-timeout:
			t.Fatalf("the last change %q never reached etcd; saw %d changes", last, len(seen))
		}
	}
	t.Logf("etcd saw %d of %d changes", len(seen), len(given))
	if !isSubsequence(seen, given) {
		t.Errorf("etcd saw the key's changes out of order:\n%s", strings.Join(seen, ", "))
	}
}

// jitterBackend delays each batch by up to 3ms, and signals on sent when
// a batch with the watched key starts.
type jitterBackend struct {
	kvstore.Backend
	watched string
	sent    chan struct{}
}

func (j *jitterBackend) Batch(ctx context.Context, ops []kvstore.Op) ([]kvstore.OpResult, error) {
	for _, op := range ops {
		if op.Key == j.watched {
			select {
			case j.sent <- struct{}{}:
			default:
			}
		}
	}
	time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
	return j.Backend.Batch(ctx, ops)
}

// isSubsequence reports whether sub is seq with some elements left out.
func isSubsequence(sub, seq []string) bool {
	i := 0
	for _, s := range sub {
		for i < len(seq) && seq[i] != s {
			i++
		}
		if i == len(seq) {
			return false
		}
		i++
	}
	return true
}

// TestSyncStoreRetriesAFailingKeyAlone puts a key etcd refuses (a value
// over its request size limit) into a batch with good keys: the good keys
// are written one at a time, the bad one is retried alone and holds the
// canary back until it is fixed.
func TestSyncStoreRetriesAFailingKeyAlone(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	metrics := store.NewMetrics()
	s := store.NewSyncStore("c1", b, batchPrefix, store.WithSyncMetrics(metrics),
		store.WithMaxBatch(kvstore.MaxBatchOps, 8<<20), // let the big key into a batch
		store.WithRetryBackoff(10*time.Millisecond, 50*time.Millisecond))
	big := &node{Name: "big", IP: strings.Repeat("x", 1600<<10)} // etcd takes 1.5 MiB per request
	must(t, s.UpsertKey(ctx(t), big))
	for i := range 50 {
		must(t, s.UpsertKey(ctx(t), fixedNode(i)))
	}
	s.Synced(ctx(t))
	runSync(t, s)
	celltest.Eventually(t, "the good keys", func() bool {
		kvs, err := b.ListPrefix(ctx(t), batchPrefix+"/")
		return err == nil && len(kvs) == 50
	})
	celltest.Eventually(t, "retries of the bad key", func() bool {
		return testutil.ToFloat64(metrics.WriteErrors.WithLabelValues(batchPrefix)) >= 3
	})
	if v, _ := b.Get(ctx(t), batchPrefix+"/big"); v != nil || s.IsSynced() {
		t.Fatalf("big key written (%d bytes) or canary set (%v) though etcd refuses the key", len(v), s.IsSynced())
	}
	sizes, _ := batchSizes(t, srv.Client(), batchPrefix+"/")
	if len(sizes) != 50 {
		t.Errorf("good keys written in %d transactions, want 50 (one each, after their batch failed)", len(sizes))
	}
	must(t, s.UpsertKey(ctx(t), &node{Name: "big", IP: "10.9.9.9"}))
	celltest.Eventually(t, "the fixed key and the canary", s.IsSynced)
	if v, _ := b.Get(ctx(t), batchPrefix+"/big"); string(v) != jsonNode("big", "10.9.9.9") {
		t.Errorf("big = %q after the fix", v)
	}
}

func TestSyncStoreDeletes(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	s := store.NewSyncStore("c1", b, batchPrefix)
	runSync(t, s)
	for i := range 200 {
		must(t, s.UpsertKey(ctx(t), fixedNode(i)))
	}
	s.Synced(ctx(t))
	celltest.Eventually(t, "canary", s.IsSynced)
	for i := range 150 {
		s.DeleteKey(ctx(t), fixedNode(i))
	}
	s.DeleteKey(ctx(t), &node{Name: "never-written"})
	must(t, s.UpsertKey(ctx(t), fixedNode(7))) // deleted, then written again
	celltest.Eventually(t, "51 keys left", func() bool {
		kvs, err := b.ListPrefix(ctx(t), batchPrefix+"/")
		if err != nil || len(kvs) != 51 {
			return false
		}
		_, ok7 := kvs[batchPrefix+"/k007"]
		_, ok8 := kvs[batchPrefix+"/k008"]
		return ok7 && !ok8
	})
}
