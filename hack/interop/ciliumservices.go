package interop

import (
	"context"
	"maps"
	"sync"
	"testing"

	cmstore "github.com/cilium/cilium/pkg/clustermesh/store"
	"github.com/cilium/cilium/pkg/kvstore"
	"github.com/cilium/cilium/pkg/kvstore/store"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// CiliumServices is what a Cilium agent's watch store of a remote
// cluster's global services holds: the ClusterServices that passed
// Cilium's decoder and its validators, by <namespace>/<name>.
type CiliumServices struct {
	mu       sync.Mutex
	services map[string]cmstore.ClusterService
	synced   bool
}

// OnUpdate is Cilium's store.Observer: a decoded and validated service.
func (s *CiliumServices) OnUpdate(k store.Key) {
	svc := k.(*cmstore.ValidatingClusterService).ClusterService
	s.mu.Lock()
	defer s.mu.Unlock()
	s.services[svc.NamespaceServiceName().String()] = svc
}

// OnDelete is Cilium's store.Observer: a service withdrawn.
func (s *CiliumServices) OnDelete(k store.NamedKey) {
	svc := k.(*cmstore.ValidatingClusterService).ClusterService
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.services, svc.NamespaceServiceName().String())
}

// Snapshot returns the services held and whether the watch store has
// listed its prefix once (Cilium's synced callback).
func (s *CiliumServices) Snapshot() (map[string]cmstore.ClusterService, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.services), s.synced
}

// WatchCiliumServices runs, on the etcd of srv, the watch store a Cilium
// agent runs for the global services of remote cluster name/id behind a
// KVStoreMesh (pkg/clustermesh's remoteCluster): Cilium's kvstore client
// and pkg/kvstore/store WatchStore on the cached ServiceStorePrefix/<name>,
// with pkg/clustermesh/store's KeyCreator and its ClusterNameValidator,
// NamespacedNameValidator and ClusterIDValidator. It runs until the test
// ends.
func WatchCiliumServices(t *testing.T, srv *kvstoretest.Server, name string, id uint32) *CiliumServices {
	t.Helper()
	log := celltest.Logger(t)
	ctx, cancel, backend := ciliumClient(t, log, srv)
	s := &CiliumServices{services: map[string]cmstore.ClusterService{}}
	clusterID := id
	ws := store.NewFactory(log, store.MetricsProvider()).NewWatchStore(name,
		cmstore.KeyCreator(cmstore.ClusterNameValidator(name), cmstore.NamespacedNameValidator(),
			cmstore.ClusterIDValidator(&clusterID)),
		s, store.RWSWithOnSyncCallback(func(context.Context) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.synced = true
		}))
	var wg sync.WaitGroup
	wg.Go(func() {
		ws.Watch(ctx, backend, kvstore.JoinKey(kvstore.StateToCachePrefix(cmstore.ServiceStorePrefix), name))
	})
	t.Cleanup(func() { cancel(); wg.Wait(); backend.Close() })
	return s
}
