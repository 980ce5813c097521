package k8scep_test

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/k8scep"
)

// TestWatcherListing: a listing larger than one batch is all in the
// ipcache when onSynced runs (this node's endpoints left out); later
// changes move and withdraw entries.
func TestWatcherListing(t *testing.T) {
	objs := benchObjects(1300) // 1300 / 100 nodes: 13 on this node
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ipc := ipcache.New(ipcache.Params{Allocator: identitycache.New(cluster.Info{}, nil, false, nil)})
	bare := celltest.NewBare(t)
	job.NewGroup(job.GroupParams{Health: bare.Health.Root(), Lifecycle: bare.Lifecycle, Logger: slog.New(slog.DiscardHandler)}).Add(ipc.Jobs()...)
	bare.Start()
	defer bare.Stop()
	events := make(chan k8s.Event[*unstructured.Unstructured])
	defer close(events)
	w := &k8scep.Watcher{IPCache: ipc, LocalNode: netip.MustParseAddr("10.200.0.0"), Log: slog.New(slog.DiscardHandler)}
	synced := make(chan ipcache.Revision, 1)
	go w.Run(ctx, events, func() {
		rev, _ := ipc.Apply()
		synced <- rev
	})
	upsert := func(o *unstructured.Unstructured) {
		events <- k8s.Event[*unstructured.Unstructured]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: o.GetNamespace(), Name: o.GetName()}, Object: o}
	}
	for _, o := range objs {
		upsert(o)
	}
	events <- k8s.Event[*unstructured.Unstructured]{Kind: k8s.Sync}
	if err := ipc.WaitForRevision(ctx, <-synced); err != nil {
		t.Fatal(err)
	}
	if got := ipc.Len(); got != 1287 {
		t.Fatalf("ipcache holds %d entries after the listing, want 1287", got)
	}
	first := netip.MustParseAddr("10.1.0.1") // pod-1, on node 10.200.0.1
	if e, ok := ipc.LookupByIP(first); !ok || e.Identity != 257 || e.K8sPodName != "pod-1" || e.TunnelPeer != netip.MustParseAddr("10.200.0.1") {
		t.Fatalf("entry of pod-1: %+v, %v", e, ok)
	}
	// pod-1 moves to another address, pod-2 is deleted.
	moved := objs[1].DeepCopy()
	moved.Object["status"].(map[string]any)["networking"].(map[string]any)["addressing"] = []any{map[string]any{"ipv4": "10.9.9.9"}}
	upsert(moved)
	events <- k8s.Event[*unstructured.Unstructured]{Kind: k8s.Delete, Key: k8s.Key{Namespace: objs[2].GetNamespace(), Name: objs[2].GetName()}, Object: objs[2]}
	celltest.Eventually(t, "pod-1 moved to 10.9.9.9 and pod-2 withdrawn", func() bool {
		_, oldThere := ipc.LookupByIP(first)
		_, newThere := ipc.LookupByIP(netip.MustParseAddr("10.9.9.9"))
		_, deletedThere := ipc.LookupByIP(netip.MustParseAddr("10.1.0.2"))
		return !oldThere && newThere && !deletedThere && ipc.Len() == 1286
	})
}
