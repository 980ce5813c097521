package nodecell_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

const nodeAKey = "cilium/state/nodes/v1/default/node-a"

// TestLocalNodeKeyComesBackAfterDelete checks that another
// writer deleting the node's key (etcdctl del) no longer leaves it
// missing until the next periodic sync.
func TestLocalNodeKeyComesBackAfterDelete(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a := startAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.10")
	raw := srv.Client()
	ctx := context.Background()
	registered := func() bool {
		resp, err := raw.Get(ctx, nodeAKey)
		return err == nil && len(resp.Kvs) == 1 && strings.Contains(string(resp.Kvs[0].Value), "192.0.2.10") && resp.Kvs[0].Lease != 0
	}
	celltest.EventuallyWithin(t, "the node key", 20*time.Second, registered)
	if _, err := raw.Delete(ctx, nodeAKey); err != nil {
		t.Fatal(err)
	}
	celltest.EventuallyWithin(t, "the node key back", 10*time.Second, registered)
	celltest.EventuallyWithin(t, "the Nodes details", 10*time.Second, func() bool {
		return strings.Contains(strings.Join(a.probe(t, "Nodes").Details, "|"), "local node key was deleted and written again")
	})
	if line := a.probe(t, "Nodes"); line.State != status.Ok {
		t.Errorf("Nodes line = %s %q: a restored deletion is no warning", line.State, line.Message)
	}
	if c, ok := a.nodes.RegistrationConflict(); !ok || !c.Deleted || c.Key != nodeAKey {
		t.Errorf("RegistrationConflict = %+v, %v", c, ok)
	}
}

// TestTwoAgentsWithOneNodeName: two agents started with the same
// --node-name keep writing their own registration, backing off, and both
// say so, naming the other's IP.
func TestTwoAgentsWithOneNodeName(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a := startAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.10")
	celltest.EventuallyWithin(t, "agent a's registration", 20*time.Second, func() bool {
		resp, err := srv.Client().Get(context.Background(), nodeAKey)
		return err == nil && len(resp.Kvs) == 1
	})
	b := startAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.20")
	for _, tc := range []struct {
		name    string
		agent   *agent
		otherIP string
	}{
		{"a", a, "192.0.2.20"},
		{"b", b, "192.0.2.10"},
	} {
		celltest.EventuallyWithin(t, "agent "+tc.name+" to report the other", 20*time.Second, func() bool {
			c, ok := tc.agent.nodes.RegistrationConflict()
			return ok && !c.Deleted && c.OtherIP == tc.otherIP
		})
		line := tc.agent.probe(t, "Nodes")
		if line.State != status.Warning || !strings.HasSuffix(line.Message, ", node name also registered by "+tc.otherIP) ||
			!strings.Contains(strings.Join(line.Details, "|"), "another agent registers "+nodeAKey+" with IP "+tc.otherIP) {
			t.Errorf("agent %s: Nodes line = %s %q %q", tc.name, line.State, line.Message, line.Details)
		}
	}
}

// TestPeriodicSyncRestoresTheLease: a copy of the node's value written
// without a lease (etcdctl put) looks unchanged to the watch, but would
// outlive the agent; --kvstore-periodic-sync compares value and lease and
// binds the key to the session lease again.
func TestPeriodicSyncRestoresTheLease(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	startAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.10", "kvstore-periodic-sync=200ms")
	raw := srv.Client()
	ctx := context.Background()
	var value string
	celltest.EventuallyWithin(t, "the node key", 20*time.Second, func() bool {
		resp, err := raw.Get(ctx, nodeAKey)
		if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
			return false
		}
		value = string(resp.Kvs[0].Value)
		return true
	})
	if _, err := raw.Put(ctx, nodeAKey, value); err != nil {
		t.Fatal(err)
	}
	celltest.EventuallyWithin(t, "the key bound to a lease again", 10*time.Second, func() bool {
		resp, err := raw.Get(ctx, nodeAKey)
		return err == nil && len(resp.Kvs) == 1 && resp.Kvs[0].Lease != 0 && string(resp.Kvs[0].Value) == value
	})
}
