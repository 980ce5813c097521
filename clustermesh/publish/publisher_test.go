package publish_test

import (
	"context"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
)

var testCluster = cluster.Info{ClusterName: "apiary1", ClusterID: 7, MaxConnectedClusters: 255}

const (
	configKey  = "cilium/cluster-config/apiary1"
	wantConfig = `{"id":7,"capabilities":{"syncedCanaries":true,"maxConnectedClusters":255}}`
	canaries   = "cilium/synced/apiary1/"
)

// runPublisher runs a Publisher on b until the test ends or stop is called.
func runPublisher(t *testing.T, b kvstore.Backend) (p *publish.Publisher, stop func()) {
	t.Helper()
	p, err := publish.New(publish.Options{Backend: b, Cluster: testCluster, Log: celltest.Logger(t),
		Resync: time.Hour, Retry: job.Backoff{Min: 50 * time.Millisecond, Max: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.Run(ctx) })
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return p, stop
}

// get returns the value and lease of key.
func get(t *testing.T, raw *clientv3.Client, key string) (string, int64) {
	t.Helper()
	resp, err := raw.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return "", 0
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].Lease
}

func TestLeaderPublishesAndOthersTakeOverWhenItIsCutOff(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	short := func(o *kvstore.EtcdOptions) { o.LeaseTTL, o.LockLeaseTTL = 3*time.Second, 2*time.Second }
	// a talks through the test's proxy, b directly: Partition cuts only a.
	a, _ := runPublisher(t, srv.NewBackend(short))
	celltest.Eventually(t, "a leads", a.Leader)
	b, _ := runPublisher(t, srv.NewBackend(short, func(o *kvstore.EtcdOptions) {
		o.Config = &kvstore.EtcdConfig{Endpoints: []string{srv.DirectEndpoint()}}
	}))

	celltest.Eventually(t, "the cluster config and the canaries", func() bool {
		v, lease := get(t, raw, configKey)
		ids, _ := get(t, raw, canaries+layout.CanaryIdentities)
		svcs, _ := get(t, raw, canaries+layout.CanaryServices)
		return v == wantConfig && lease != 0 && ids != "" && svcs != ""
	})
	_, leaseA := get(t, raw, configKey)
	if b.Leader() {
		t.Fatal("two leaders")
	}

	srv.Partition() // a can no longer renew its leases: as if it died
	celltest.EventuallyWithin(t, "b takes over", 30*time.Second, b.Leader)
	celltest.EventuallyWithin(t, "the config and canaries written again by b", 30*time.Second, func() bool {
		v, lease := get(t, raw, configKey)
		ids, _ := get(t, raw, canaries+layout.CanaryIdentities)
		return v == wantConfig && lease != 0 && lease != leaseA && ids != ""
	})
	srv.Heal()
	celltest.EventuallyWithin(t, "a knows it lost the lock", 30*time.Second, func() bool { return !a.Leader() })
	if !b.Leader() {
		t.Error("b is no longer the leader after a came back")
	}
}

func TestLeaderStopsThenTheOtherPublishes(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	ba := srv.NewBackend()
	a, stopA := runPublisher(t, ba)
	celltest.Eventually(t, "a leads", a.Leader)
	b, _ := runPublisher(t, srv.NewBackend())
	celltest.Eventually(t, "the config", func() bool { v, _ := get(t, raw, configKey); return v == wantConfig })
	_, leaseA := get(t, raw, configKey)
	stopA()
	ba.Close() // the agent stops: the lock lease is revoked, its keys stay until their lease expires
	celltest.Eventually(t, "b takes over", b.Leader)
	celltest.Eventually(t, "the config bound to b's lease", func() bool {
		v, lease := get(t, raw, configKey)
		return v == wantConfig && lease != 0 && lease != leaseA
	})
}

func TestLeaderKeepsItsKeys(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	ctx := context.Background()
	p, _ := runPublisher(t, srv.NewBackend())
	celltest.Eventually(t, "leader", p.Leader)
	celltest.Eventually(t, "the config", func() bool { v, _ := get(t, raw, configKey); return v == wantConfig })

	t.Run("config overwritten", func(t *testing.T) {
		if _, err := raw.Put(ctx, configKey, `{"id":9}`); err != nil {
			t.Fatal(err)
		}
		celltest.Eventually(t, "the config restored", func() bool {
			v, lease := get(t, raw, configKey)
			return v == wantConfig && lease != 0
		})
	})
	t.Run("canary deleted", func(t *testing.T) {
		if _, err := raw.Delete(ctx, canaries+layout.CanaryServices); err != nil {
			t.Fatal(err)
		}
		celltest.Eventually(t, "the services canary restored", func() bool {
			v, _ := get(t, raw, canaries+layout.CanaryServices)
			_, err := time.Parse(time.RFC3339, v)
			return err == nil
		})
	})
	t.Run("an agent's canary vanishes with its lease", func(t *testing.T) {
		// Another agent wrote the ipcache canary with its lease, then died.
		lease, err := raw.Grant(ctx, 60)
		if err != nil {
			t.Fatal(err)
		}
		key := canaries + "cilium/state/ip/v1"
		if _, err := raw.Put(ctx, key, time.Now().UTC().Format(time.RFC3339), clientv3.WithLease(lease.ID)); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Revoke(ctx, lease.ID); err != nil {
			t.Fatal(err)
		}
		celltest.Eventually(t, "the ipcache canary written again by the leader", func() bool {
			v, l := get(t, raw, key)
			return v != "" && l != 0 && l != int64(lease.ID)
		})
	})
	t.Run("canaries never written are not invented", func(t *testing.T) {
		if v, _ := get(t, raw, canaries+"cilium/state/nodes/v1"); v != "" {
			t.Errorf("nodes canary = %q, written by nobody's node store", v)
		}
	})
}
