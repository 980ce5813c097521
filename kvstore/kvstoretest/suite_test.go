package kvstoretest_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestMemoryBackendConformance(t *testing.T) {
	kvstoretest.RunBackendSuite(t, func(t *testing.T) kvstoretest.Subject {
		b := kvstoretest.NewMemory().NewBackend()
		t.Cleanup(b.Close)
		return kvstoretest.Subject{
			Backend:     b,
			ExpireLease: func(*testing.T, string) { b.ExpireSession() },
		}
	})
}

func TestEtcdBackendConformance(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	kvstoretest.RunBackendSuite(t, func(t *testing.T) kvstoretest.Subject {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := raw.Delete(ctx, "", clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
		return kvstoretest.Subject{
			// A short TTL makes keepalives frequent, so a revoked lease is
			// noticed within a second or two.
			Backend:     srv.NewBackend(func(o *kvstore.EtcdOptions) { o.LeaseTTL = 3 * time.Second }),
			ExpireLease: func(t *testing.T, key string) { revokeLeaseOf(t, raw, key) },
		}
	})
}

// revokeLeaseOf revokes the lease key is bound to, as etcd does when a
// lease's TTL passes without keepalives.
func revokeLeaseOf(t *testing.T, c *clientv3.Client, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("key %s has no lease (%v)", key, err)
	}
	if _, err := c.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
}
