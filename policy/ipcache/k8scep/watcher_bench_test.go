package k8scep_test

import (
	"context"
	"fmt"
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

// benchObjects are n CiliumEndpoints of 100 nodes, as the informer
// hands them out.
func benchObjects(n int) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, n)
	for i := range out {
		ip := netip.AddrFrom4([4]byte{10, byte(1 + i>>16), byte(i >> 8), byte(i)})
		out[i] = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
			"metadata": map[string]any{"name": fmt.Sprintf("pod-%d", i), "namespace": fmt.Sprintf("cep-%d", i%10),
				"uid": fmt.Sprintf("uid-%d", i), "resourceVersion": fmt.Sprint(1000 + i)},
			"status": map[string]any{
				"id":          int64(i%4000 + 1),
				"identity":    map[string]any{"id": int64(256 + i%500), "labels": []any{fmt.Sprintf("k8s:app=app-%d", i%500)}},
				"networking":  map[string]any{"node": netip.AddrFrom4([4]byte{10, 200, 0, byte(i % 100)}).String(), "addressing": []any{map[string]any{"ipv4": ip.String()}}},
				"state":       "ready",
				"named-ports": []any{map[string]any{"name": "http", "port": int64(8080), "protocol": "TCP"}},
			},
		}}
	}
	return out
}

// BenchmarkWatcherListing is one node reading a listing of 10,000
// CiliumEndpoints into its ipcache, until the ipcache holds them.
func BenchmarkWatcherListing(b *testing.B) {
	objs := benchObjects(10000)
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		ipc := ipcache.New(ipcache.Params{Allocator: identitycache.New(cluster.Info{}, nil, false, nil)})
		bare := celltest.NewBare(b)
		job.NewGroup(job.GroupParams{Health: bare.Health.Root(), Lifecycle: bare.Lifecycle, Logger: slog.New(slog.DiscardHandler)}).Add(ipc.Jobs()...)
		bare.Start()
		events := make(chan k8s.Event[*unstructured.Unstructured])
		w := &k8scep.Watcher{IPCache: ipc, LocalNode: netip.MustParseAddr("10.200.0.0"), Log: slog.New(slog.DiscardHandler)}
		synced := make(chan struct{})
		go w.Run(ctx, events, func() { close(synced) })
		for _, o := range objs {
			events <- k8s.Event[*unstructured.Unstructured]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: o.GetNamespace(), Name: o.GetName()}, Object: o}
		}
		events <- k8s.Event[*unstructured.Unstructured]{Kind: k8s.Sync}
		<-synced
		rev, _ := ipc.Apply()
		_ = ipc.WaitForRevision(ctx, rev)
		if got := ipc.Len(); got != 9900 {
			b.Fatalf("ipcache holds %d entries, want 9900", got)
		}
		close(events)
		cancel()
		bare.Stop()
	}
}
