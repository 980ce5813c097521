package kvstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// TestLockLostWhenItsLeaseEnds checks LockWatcher on real etcd: Lost
// stays open while the lock is held and closes when the lock's lease is
// revoked behind the holder's back (as when it expires), after which
// Unlock reports ErrLockLost and another holder gets the lock.
func TestLockLostWhenItsLeaseEnds(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const path = "cilium/locks/lost"
	l, err := b.LockPath(ctx, path)
	must(t, err)
	w, ok := l.(kvstore.LockWatcher)
	if !ok {
		t.Fatalf("the etcd lock %T is no LockWatcher", l)
	}
	select {
	case <-w.Lost():
		t.Fatal("Lost closed while the lock is held")
	default:
	}

	raw := srv.Client()
	resp, err := raw.Get(ctx, path, clientv3.WithPrefix())
	must(t, err)
	if len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("lock keys = %v, want one bound to a lease", resp.Kvs)
	}
	_, err = raw.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	must(t, err)
	select {
	case <-w.Lost():
	case <-time.After(15 * time.Second):
		t.Fatal("Lost not closed after the lock's lease was revoked")
	}
	if err := l.Unlock(ctx); !errors.Is(err, kvstore.ErrLockLost) {
		t.Errorf("Unlock = %v, want ErrLockLost", err)
	}
	other := srv.NewBackend()
	l2, err := other.LockPath(ctx, path)
	must(t, err)
	must(t, l2.Unlock(ctx))
}
