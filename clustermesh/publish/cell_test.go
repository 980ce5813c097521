package publish_test

import (
	"context"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// startAgent starts the publisher cell of one agent of cluster apiary1.
func startAgent(t *testing.T, srv *kvstoretest.Server, node string) (*hive.Hive, publish.Leadership) {
	t.Helper()
	var l publish.Leadership
	h := celltest.StartWithFlags(t, []string{
		"kvstore=etcd", "kvstore-opt=etcd.address=" + srv.Endpoint(), "kvstore-heartbeat-writer=false",
		"cluster-name=apiary1", "cluster-id=7", "node-name=" + node, "node-ip=192.0.2.10",
	}, kvstorecell.Cell, localnode.Cell, publish.Cell, celltest.Capture(&l))
	return h, l
}

func TestOneAgentPerClusterPublishes(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	h1, l1 := startAgent(t, srv, "node-1")
	h2, l2 := startAgent(t, srv, "node-2")
	celltest.Eventually(t, "one leader", func() bool { return l1.Leader() != l2.Leader() })
	celltest.Eventually(t, "the cluster config", func() bool {
		v, lease := get(t, raw, configKey)
		return v == wantConfig && lease != 0
	})

	leader, other := h1, l2
	if l2.Leader() {
		leader, other = h2, l1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := leader.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the other agent takes over", other.Leader)
	celltest.Eventually(t, "the config written again", func() bool {
		v, lease := get(t, raw, configKey)
		return v == wantConfig && lease != 0
	})
}

func TestNoKVStoreNoPublisher(t *testing.T) {
	var l publish.Leadership
	celltest.StartWithFlags(t, []string{"node-name=node-1", "node-ip=192.0.2.10"},
		kvstorecell.Cell, localnode.Cell, publish.Cell, celltest.Capture(&l))
	if l.Leader() {
		t.Error("a standalone agent claims to publish")
	}
}
