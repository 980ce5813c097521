package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
)

func runSync(t *testing.T, s *store.SyncStore) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(c) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func TestSyncStoreWritesKeysThenCanary(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	s := store.NewSyncStore("c1", b, "cilium/state/ip/v1/default")
	runSync(t, s)
	must(t, s.UpsertKey(ctx(t), &node{Name: "10.0.0.1", IP: "10.0.0.1"}))
	must(t, s.UpsertKey(ctx(t), &node{Name: "10.0.0.2", IP: "10.0.0.2"}))
	must(t, s.UpsertKey(ctx(t), &node{Name: "10.0.0.2", IP: "10.0.0.22"})) // coalesced
	s.DeleteKey(ctx(t), &node{Name: "10.0.0.1"})
	done := make(chan struct{})
	s.Synced(ctx(t), func(context.Context) { close(done) })
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("synced callback not called")
	}
	if s.CanaryKey() != "cilium/synced/c1/cilium/state/ip/v1/default" {
		t.Errorf("canary key = %s", s.CanaryKey())
	}
	canary, err := b.Get(ctx(t), s.CanaryKey())
	must(t, err)
	if _, err := time.Parse(time.RFC3339, string(canary)); err != nil {
		t.Errorf("canary value %q is not RFC 3339: %v", canary, err)
	}
	kvs, err := b.ListPrefix(ctx(t), "cilium/state/ip/v1/default/")
	must(t, err)
	if len(kvs) != 1 || string(kvs["cilium/state/ip/v1/default/10.0.0.2"].Data) != jsonNode("10.0.0.2", "10.0.0.22") {
		t.Errorf("stored = %v, want only 10.0.0.2 with the last value", kvs)
	}
}

// flakyBackend fails the first n write requests.
type flakyBackend struct {
	kvstore.Backend
	fails atomic.Int32
}

func (f *flakyBackend) Batch(ctx context.Context, ops []kvstore.Op) ([]kvstore.OpResult, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, errors.New("etcdserver: request timed out")
	}
	return f.Backend.Batch(ctx, ops)
}

func TestSyncStoreRetriesAndHoldsCanaryUntilWritten(t *testing.T) {
	mem := kvstoretest.NewMemory().NewBackend()
	defer mem.Close()
	flaky := &flakyBackend{Backend: mem}
	flaky.fails.Store(3)
	metrics := store.NewMetrics()
	s := store.NewSyncStore("c1", flaky, "cilium/state/x", store.WithRetryBackoff(10*time.Millisecond, 50*time.Millisecond), store.WithSyncMetrics(metrics))
	runSync(t, s)
	must(t, s.UpsertKey(ctx(t), &node{Name: "a", IP: "1"}))
	s.Synced(ctx(t))
	celltest.Eventually(t, "canary", s.IsSynced)
	if v, _ := mem.Get(ctx(t), "cilium/state/x/a"); string(v) != jsonNode("a", "1") {
		t.Errorf("key a = %q after retries", v)
	}
	if flaky.fails.Load() >= 0 {
		t.Errorf("the write was not retried through its failures")
	}
}

func TestSyncStoreRecreatesKeysAfterLeaseLoss(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.LeaseTTL = 3 * time.Second })
	s := store.NewSyncStore("c1", b, "cilium/state/nodes/v1/c1")
	runSync(t, s)
	must(t, s.UpsertKey(ctx(t), &node{Name: "n1", IP: "10.0.0.1"}))
	s.Synced(ctx(t))
	celltest.Eventually(t, "canary", s.IsSynced)

	raw := srv.Client()
	resp, err := raw.Get(ctx(t), "cilium/state/nodes/v1/c1/n1")
	must(t, err)
	if len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("key not written with a lease: %v", resp.Kvs)
	}
	_, err = raw.Revoke(ctx(t), clientv3.LeaseID(resp.Kvs[0].Lease))
	must(t, err)
	celltest.Eventually(t, "key and canary back after lease loss", func() bool {
		v, _ := b.Get(ctx(t), "cilium/state/nodes/v1/c1/n1")
		c, _ := b.Get(ctx(t), s.CanaryKey())
		return string(v) == jsonNode("n1", "10.0.0.1") && c != nil
	})
}

func TestSyncStoreSyncedKeyOverride(t *testing.T) {
	tests := []struct {
		name, prefix string
		opts         []store.SyncStoreOption
		want         string
	}{
		{name: "default is the prefix", prefix: "cilium/state/ip/v1/default",
			want: "cilium/synced/c1/cilium/state/ip/v1/default"},
		{name: "ipcache as Cilium's readers wait for it", prefix: "cilium/state/ip/v1/default",
			opts: []store.SyncStoreOption{store.WithSyncedKey("cilium/state/ip/v1")},
			want: "cilium/synced/c1/cilium/state/ip/v1"},
		{name: "slashes trimmed", prefix: "cilium/state/identities/v1/id",
			opts: []store.SyncStoreOption{store.WithSyncedKey("/cilium/state/identities/v1/")},
			want: "cilium/synced/c1/cilium/state/identities/v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := kvstoretest.NewMemory().NewBackend()
			defer b.Close()
			s := store.NewSyncStore("c1", b, tc.prefix, tc.opts...)
			if s.CanaryKey() != tc.want {
				t.Fatalf("canary key = %s, want %s", s.CanaryKey(), tc.want)
			}
			runSync(t, s)
			must(t, s.UpsertKey(ctx(t), &node{Name: "k", IP: "1"}))
			s.Synced(ctx(t))
			celltest.Eventually(t, "canary", s.IsSynced)
			canaries, err := b.ListPrefix(ctx(t), layout.SyncedPrefix+"/")
			must(t, err)
			if _, ok := canaries[tc.want]; !ok || len(canaries) != 1 {
				t.Errorf("canaries = %v, want only %s", canaries, tc.want)
			}
		})
	}
}
