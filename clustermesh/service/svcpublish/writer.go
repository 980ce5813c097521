package svcpublish

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
)

// Writer keeps the shared global services of this cluster in its etcd,
// at layout.ServiceKey(cluster, namespace, name), while this agent is
// the cluster's publisher (publish.Leadership): one SyncStore per term
// of leadership, with its session lease. Its feeder is this cluster's
// one source of services: the Kubernetes watcher (k8ssvc) with
// Kubernetes, the service manager's other sources (Cell) without.
type Writer struct {
	backend kvstore.Backend
	cluster cluster.Info
	lead    publish.Leadership
	log     *slog.Logger
	metrics *store.Metrics

	mu      sync.Mutex
	desired map[string]*service.ClusterService // namespace/name -> shared global service
	st      *store.SyncStore                   // the current term's store; nil when not leading
}

// NewWriter returns a Writer of cluster's services in backend; Run
// starts it, Set feeds it.
func NewWriter(backend kvstore.Backend, cluster cluster.Info, lead publish.Leadership, log *slog.Logger, m *store.Metrics) *Writer {
	return &Writer{backend: backend, cluster: cluster, lead: lead, log: log, metrics: m,
		desired: map[string]*service.ClusterService{}}
}

// prefix is layout.ServicesClusterPrefix of this cluster.
func (w *Writer) prefix() string { return layout.ServicesClusterPrefix(w.cluster.ClusterName) }

// Set records the service to publish at namespace/name key (nil: none),
// and writes it when leading.
func (w *Writer) Set(key string, cs *service.ClusterService) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cs == nil {
		if _, ok := w.desired[key]; !ok {
			return
		}
		delete(w.desired, key)
		if w.st != nil {
			w.st.DeleteKey(context.Background(), &store.KVPair{Name: key})
		}
		return
	}
	if old, ok := w.desired[key]; ok && sameValue(old, cs) {
		return // an EndpointSlice change that changes no backend
	}
	w.desired[key] = cs
	if w.st != nil {
		_ = w.st.UpsertKey(context.Background(), cs) // a ClusterService always marshals
	}
}

// Run waits for the source's initial state (synced closed: the
// Kubernetes caches, the state file read), then writes for every term of
// leadership until ctx ends. Before synced, a term would delete the keys
// of services not listed yet.
func (w *Writer) Run(ctx context.Context, synced <-chan struct{}) {
	select {
	case <-synced:
	case <-ctx.Done():
		return
	}
	for ctx.Err() == nil {
		leader, changed := w.lead.LeaderState()
		if leader {
			w.term(ctx, changed)
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
}

// term writes the services until the leadership changes or ctx ends:
// every desired one, then the deletion of the keys of services gone
// while no one wrote, then the sync canary.
func (w *Writer) term(ctx context.Context, changed <-chan struct{}) {
	ctx, cancel := context.WithCancel(ctx)
	st := store.NewSyncStore(w.cluster.ClusterName, w.backend, w.prefix(),
		store.WithSyncedKey(layout.CanaryServices), store.WithSyncLogger(w.log), store.WithSyncMetrics(w.metrics))
	w.mu.Lock()
	w.st = st
	for _, cs := range w.desired {
		_ = st.UpsertKey(ctx, cs)
	}
	w.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { st.Run(ctx) })
	defer func() {
		w.mu.Lock()
		w.st = nil
		w.mu.Unlock()
		cancel()
		wg.Wait()
	}()
	w.log.Info("Publishing this cluster's global services", "prefix", w.prefix())
	retry := job.Backoff{Min: time.Second, Max: 30 * time.Second}
	for failures := 0; !w.deleteStale(ctx, st); {
		failures++
		if !job.Sleep(ctx, retry.Duration(failures)) {
			return
		}
	}
	st.Synced(ctx)
	select {
	case <-changed:
	case <-ctx.Done():
	}
}

// deleteStale deletes the keys of services no longer published; it
// reports whether it could list them.
func (w *Writer) deleteStale(ctx context.Context, st *store.SyncStore) bool {
	kvs, err := w.backend.ListPrefix(ctx, w.prefix()+"/")
	if err != nil {
		w.log.Warn("Unable to list the published services; the sync canary waits for it",
			"prefix", w.prefix(), "error", err)
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range kvs {
		name := strings.TrimPrefix(k, w.prefix()+"/")
		if _, ok := w.desired[name]; !ok {
			w.log.Info("Deleting a published service that is gone", "key", k)
			st.DeleteKey(ctx, &store.KVPair{Name: name})
		}
	}
	return true
}

// sameValue reports whether a and b are stored as the same value.
func sameValue(a, b *service.ClusterService) bool {
	va, errA := a.Marshal()
	vb, errB := b.Marshal()
	return errA == nil && errB == nil && bytes.Equal(va, vb)
}
