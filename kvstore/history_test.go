package kvstore_test

import (
	"context"
	"fmt"
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

// pumpRevisions writes n times to a key nobody watches, so that the
// revision seen by clients is well above what a restored etcd starts from
// and what it reaches during the test.
func pumpRevisions(t *testing.T, c *clientv3.Client, n int) {
	t.Helper()
	for i := range n {
		put(t, c, "pump", fmt.Sprint(i))
	}
}

func historyLost(m *kvstore.Metrics) int { return int(testutil.ToFloat64(m.HistoryLost)) }

func TestWatchAfterEtcdRestartedEmpty(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	put(t, raw, "cilium/state/w/a", "1")
	put(t, raw, "cilium/state/w/b", "2")
	pumpRevisions(t, raw, 100)
	m := kvstore.NewMetrics()
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.Metrics = m })
	ch, st := startWatch(t, b, "cilium/state/w/")

	srv.RestartEmpty()
	raw = srv.Client()
	put(t, raw, "cilium/state/w/a", "1") // the same value at another revision
	put(t, raw, "cilium/state/w/c", "3")
	// b vanished, c arrives although its revision is below the one the
	// watch had reached, a is not reported again.
	st.waitFor(t, ch, map[string]string{"cilium/state/w/a": "1", "cilium/state/w/c": "3"})
	expectQuiet(t, ch)
	if historyLost(m) == 0 {
		t.Error("history_lost_total is 0")
	}

	// Watching goes on in the new history.
	put(t, raw, "cilium/state/w/d", "4")
	st.waitFor(t, ch, map[string]string{"cilium/state/w/a": "1", "cilium/state/w/c": "3", "cilium/state/w/d": "4"})
}

func TestWatchAfterEtcdRestoredFromBackup(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	put(t, raw, "cilium/state/w/a", "1")
	put(t, raw, "cilium/state/w/b", "2")
	m := kvstore.NewMetrics()
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.Metrics = m })
	ch, st := startWatch(t, b, "cilium/state/w/")

	backup := srv.Backup()
	raw = srv.Client()
	put(t, raw, "cilium/state/w/a", "1b")
	del(t, raw, "cilium/state/w/b")
	put(t, raw, "cilium/state/w/c", "3")
	pumpRevisions(t, raw, 100)
	st.waitFor(t, ch, map[string]string{"cilium/state/w/a": "1b", "cilium/state/w/c": "3"})
	if n := historyLost(m); n != 0 {
		t.Fatalf("a restart with its data made history_lost_total %d", n)
	}

	srv.Restore(backup)
	raw = srv.Client()
	put(t, raw, "cilium/state/w/d", "4")
	st.waitFor(t, ch, map[string]string{
		"cilium/state/w/a": "1", "cilium/state/w/b": "2", "cilium/state/w/d": "4",
	})
	expectQuiet(t, ch)
}

// TestRestartKeepsHistory checks that plain restarts and partitions are
// not taken for a loss of history.
func TestRestartKeepsHistory(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	m := kvstore.NewMetrics()
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.Metrics, o.ConnectivityTimeout = m, 500*time.Millisecond })
	ch, st := startWatch(t, b, "cilium/state/w/")
	want := map[string]string{}
	for i := range 3 {
		srv.Restart()
		waitStatus(t, b, "Ok", isOK)
		srv.Partition()
		waitStatus(t, b, "a failure", isFailure)
		srv.Heal()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		key := fmt.Sprintf("cilium/state/w/%d", i)
		must(t, b.Update(ctx, key, []byte("v"), true))
		cancel()
		want[key] = "v"
		st.waitFor(t, ch, want)
	}
	expectQuiet(t, ch)
	if n := historyLost(m); n != 0 {
		t.Errorf("restarts and partitions made history_lost_total %d", n)
	}
}

// localKey is a key this agent writes through a SyncStore.
type localKey struct{ name, value string }

func (k localKey) GetKeyName() string       { return k.name }
func (k localKey) Marshal() ([]byte, error) { return []byte(k.value), nil }

// TestSessionLeaseRenewedAfterEtcdRestartedEmpty checks that keys bound to
// the session lease are written again on a lease the new etcd knows.
func TestSessionLeaseRenewedAfterEtcdRestartedEmpty(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	log := celltest.Logger(t)
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.Logger = log })
	s := store.NewSyncStore("default", b, "cilium/state/l/v1", store.WithSyncLogger(log))
	must(t, s.UpsertKey(context.Background(), localKey{"a", "1"}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	raw := srv.Client()
	leaseOf := func() (clientv3.LeaseID, bool) {
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		resp, err := raw.Get(rctx, "cilium/state/l/v1/a")
		if err != nil || len(resp.Kvs) == 0 || resp.Kvs[0].Lease == 0 {
			return 0, false
		}
		ttl, err := raw.TimeToLive(rctx, clientv3.LeaseID(resp.Kvs[0].Lease))
		return clientv3.LeaseID(resp.Kvs[0].Lease), err == nil && ttl.TTL > 0
	}
	celltest.Eventually(t, "the key written on a live lease", func() bool { _, ok := leaseOf(); return ok })

	srv.RestartEmpty()
	raw = srv.Client()
	celltest.Eventually(t, "the key written again on a lease the new etcd knows", func() bool { _, ok := leaseOf(); return ok })
}

// TestHeartbeatStatusAfterEtcdRestartedEmpty checks that the status
// follows heartbeats written into a restarted, empty etcd.
func TestHeartbeatStatusAfterEtcdRestartedEmpty(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	pumpRevisions(t, srv.Client(), 200)
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.HeartbeatTimeout = time.Second })
	stop := kvstore.StartHeartbeat(b, 300*time.Millisecond, nil)
	waitStatus(t, b, "Ok with a heartbeat writer", isOK)
	stop()

	srv.RestartEmpty()
	waitStatus(t, b, "failing for lack of heartbeats", func(st kvstore.Status) bool {
		// Either wording: the new etcd may have been listed before any
		// heartbeat reached it ("no heartbeat update received") or not.
		return st.State == kvstore.StateFailure && strings.Contains(st.Message, "heartbeat update")
	})
	stop = kvstore.StartHeartbeat(b, 300*time.Millisecond, nil)
	defer stop()
	waitStatus(t, b, "Ok with heartbeats written into the new etcd", isOK)
}
