package interop

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cilium/cilium/pkg/cidr"
	"github.com/cilium/cilium/pkg/clustermesh/clustercfg"
	cmstore "github.com/cilium/cilium/pkg/clustermesh/store"
	cmtypes "github.com/cilium/cilium/pkg/clustermesh/types"
	ciliumidentity "github.com/cilium/cilium/pkg/identity"
	identitycache "github.com/cilium/cilium/pkg/identity/cache"
	ciliumipcache "github.com/cilium/cilium/pkg/ipcache"
	"github.com/cilium/cilium/pkg/kvstore"
	"github.com/cilium/cilium/pkg/kvstore/store"
	ciliumlabels "github.com/cilium/cilium/pkg/labels"
	"github.com/cilium/cilium/pkg/loadbalancer"
	"github.com/cilium/cilium/pkg/node/addressing"
	nodestore "github.com/cilium/cilium/pkg/node/store"
	nodetypes "github.com/cilium/cilium/pkg/node/types"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// CiliumCluster is what PublishCiliumCluster writes: a cluster as
// clustermesh-apiserver publishes it from its CiliumNodes,
// CiliumEndpoints and CiliumIdentities.
type CiliumCluster struct {
	Name       string
	ID         uint32
	Nodes      []nodetypes.Node
	Endpoints  []ciliumidentity.IPIdentityPair
	Identities map[ciliumidentity.NumericIdentity][]string // id -> labels ("k8s:app=web")
	// Services are the cluster's services as clustermesh-apiserver
	// exports them (apiary's layout.ServiceKey(cluster, ns, name)).
	Services []cmstore.ClusterService
}

// ExampleCiliumCluster returns cluster name/id with two nodes, one
// endpoint on each (an employee and a stranger) and their identities,
// in the shapes Cilium's converters give them.
func ExampleCiliumCluster(name string, id uint32) CiliumCluster {
	ident := func(n uint32) ciliumidentity.NumericIdentity {
		return ciliumidentity.NumericIdentity(id<<16 | n)
	}
	node := func(n int) nodetypes.Node {
		return nodetypes.Node{
			Name: fmt.Sprintf("worker-%d", n), Cluster: name, ClusterID: id,
			IPAddresses: []nodetypes.Address{
				{Type: addressing.NodeInternalIP, IP: net.ParseIP(fmt.Sprintf("192.0.2.%d", 100+n))},
				{Type: addressing.NodeCiliumInternalIP, IP: net.ParseIP(fmt.Sprintf("10.%d.%d.1", id, n))},
			},
			IPv4AllocCIDR: cidr.MustParseCIDR(fmt.Sprintf("10.%d.%d.0/24", id, n)),
		}
	}
	pod := func(n int, ip string, ns, pod, sa string, idn uint32, ports ...ciliumidentity.NamedPort) ciliumidentity.IPIdentityPair {
		return ciliumidentity.IPIdentityPair{
			IP: net.ParseIP(ip), HostIP: net.ParseIP(fmt.Sprintf("192.0.2.%d", 100+n)), ID: ident(idn),
			K8sNamespace: ns, K8sPodName: pod, K8sServiceAccount: sa, NamedPorts: ports,
			Metadata: fmt.Sprintf("cilium-global:%s:worker-%d:%d", name, n, 1000+n),
		}
	}
	podLabels := func(app string) []string {
		return []string{"k8s:app=" + app, "k8s:io.kubernetes.pod.namespace=istio-space",
			"k8s:io.cilium.k8s.policy.cluster=" + name, "k8s:io.cilium.k8s.policy.serviceaccount=" + app}
	}
	return CiliumCluster{
		Name: name, ID: id,
		Nodes: []nodetypes.Node{node(1), node(2)},
		Endpoints: []ciliumidentity.IPIdentityPair{
			pod(1, fmt.Sprintf("10.%d.1.10", id), "istio-space", "employee-0", "employee", 300,
				ciliumidentity.NamedPort{Name: "http", Port: 8080, Protocol: "TCP"}),
			pod(2, fmt.Sprintf("10.%d.2.10", id), "istio-space", "stranger-0", "stranger", 301),
		},
		Identities: map[ciliumidentity.NumericIdentity][]string{
			ident(300): podLabels("employee"),
			ident(301): podLabels("stranger"),
		},
		Services: []cmstore.ClusterService{globalService(name, id)},
	}
}

// globalService is istio-space/employee, a global shared service whose
// backend is the employee pod, as clustermesh-apiserver converts it.
func globalService(cluster string, id uint32) cmstore.ClusterService {
	s := cmstore.NewClusterService("employee", "istio-space")
	s.Cluster, s.ClusterID, s.IncludeExternal, s.Shared = cluster, id, true, true
	s.Frontends["10.96.0.20"] = cmstore.PortConfiguration{"http": &loadbalancer.L4Addr{Protocol: loadbalancer.TCP, Port: 80}}
	s.Backends[fmt.Sprintf("10.%d.1.10", id)] = cmstore.PortConfiguration{"http": &loadbalancer.L4Addr{Protocol: loadbalancer.TCP, Port: 8080}}
	s.Selector["app"] = "employee"
	return s
}

// PublishCiliumCluster writes c into the etcd of srv with Cilium's own
// writers, as clustermesh-apiserver does: the cluster config with
// clustercfg.Set, then nodes, endpoints (ipcache), identities and
// services through pkg/kvstore/store SyncStores with
// clustermesh-apiserver's prefixes and synced-key overrides, each
// writing its sync canary once its keys are written. It returns when
// every canary is written; the writers keep running (and their keys,
// bound to their lease, stay) until the test ends.
//
// It is the hook for an apiary agent that meshes with a Cilium cluster:
// point the agent's clustermesh config at srv. The returned publisher
// deletes entries with the same writers, as clustermesh-apiserver does
// when a CiliumNode or CiliumEndpoint goes away.
func PublishCiliumCluster(t *testing.T, srv *kvstoretest.Server, c CiliumCluster) *CiliumPublisher {
	t.Helper()
	log := celltest.Logger(t)
	ctx, cancel, backend := ciliumClient(t, log, srv)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait(); backend.Close() })

	cfg := cmtypes.CiliumClusterConfig{ID: c.ID, Capabilities: cmtypes.CiliumClusterConfigCapabilities{
		SyncedCanaries: true, MaxConnectedClusters: 255}}
	if err := clustercfg.Set(ctx, c.Name, cfg, backend); err != nil {
		t.Fatalf("clustercfg.Set: %v", err)
	}

	factory := store.NewFactory(log, store.MetricsProvider())
	var keys []store.Key
	stores := map[string]store.SyncStore{
		"nodes": factory.NewSyncStore(c.Name, backend, nodestore.NodeStorePrefix),
		"endpoints": factory.NewSyncStore(c.Name, backend,
			kvstore.JoinKey(ciliumipcache.IPIdentitiesPath, ciliumipcache.DefaultAddressSpace),
			store.WSSWithSyncedKeyOverride(ciliumipcache.IPIdentitiesPath)),
		"identities": factory.NewSyncStore(c.Name, backend, kvstore.JoinKey(identitycache.IdentitiesPath, "id"),
			store.WSSWithSyncedKeyOverride(identitycache.IdentitiesPath)),
		"services": factory.NewSyncStore(c.Name, backend, cmstore.ServiceStorePrefix),
	}
	for i := range c.Nodes {
		keys = append(keys, &c.Nodes[i])
	}
	upsert(t, ctx, stores["nodes"], keys...)
	keys = keys[:0]
	for i := range c.Endpoints {
		keys = append(keys, &c.Endpoints[i])
	}
	upsert(t, ctx, stores["endpoints"], keys...)
	keys = keys[:0]
	for id, lbls := range c.Identities {
		keys = append(keys, store.NewKVPair(id.String(), string(ciliumlabels.NewLabelsFromModel(lbls).SortedList())))
	}
	upsert(t, ctx, stores["identities"], keys...)
	keys = keys[:0]
	for i := range c.Services {
		keys = append(keys, &c.Services[i])
	}
	upsert(t, ctx, stores["services"], keys...)

	var synced sync.WaitGroup
	for name, s := range stores {
		wg.Go(func() { s.Run(ctx) })
		synced.Add(1)
		if err := s.Synced(ctx, func(context.Context) { synced.Done() }); err != nil {
			t.Fatalf("%s: synced: %v", name, err)
		}
	}
	done := make(chan struct{})
	go func() { synced.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Cilium's sync stores did not write their canaries within a minute")
	}
	return &CiliumPublisher{cluster: c, stores: stores}
}

// CiliumPublisher holds the SyncStores PublishCiliumCluster writes with.
type CiliumPublisher struct {
	cluster CiliumCluster
	stores  map[string]store.SyncStore
}

// DeleteNode deletes node name of the cluster with Cilium's node
// SyncStore.
func (p *CiliumPublisher) DeleteNode(t *testing.T, name string) {
	t.Helper()
	for i := range p.cluster.Nodes {
		if n := &p.cluster.Nodes[i]; n.Name == name {
			if err := p.stores["nodes"].DeleteKey(t.Context(), n); err != nil {
				t.Fatalf("delete node %s: %v", name, err)
			}
			return
		}
	}
	t.Fatalf("delete node %s: not one of cluster %s's", name, p.cluster.Name)
}

// DeleteEndpoint deletes the ipcache entry of ip with Cilium's
// endpoints SyncStore.
func (p *CiliumPublisher) DeleteEndpoint(t *testing.T, ip string) {
	t.Helper()
	for i := range p.cluster.Endpoints {
		if e := &p.cluster.Endpoints[i]; e.IP.String() == ip {
			if err := p.stores["endpoints"].DeleteKey(t.Context(), e); err != nil {
				t.Fatalf("delete ipcache entry %s: %v", ip, err)
			}
			return
		}
	}
	t.Fatalf("delete ipcache entry %s: not one of cluster %s's", ip, p.cluster.Name)
}

// UpsertService writes svc with Cilium's services SyncStore, as
// clustermesh-apiserver does when a Service or its EndpointSlices change:
// a backend that went away is the same key written without it.
func (p *CiliumPublisher) UpsertService(t *testing.T, svc cmstore.ClusterService) {
	t.Helper()
	if svc.Cluster != p.cluster.Name {
		t.Fatalf("upsert service %s: not of cluster %s", svc.String(), p.cluster.Name)
	}
	if err := p.stores["services"].UpsertKey(t.Context(), &svc); err != nil {
		t.Fatalf("upsert service %s: %v", svc.String(), err)
	}
}

func upsert(t *testing.T, ctx context.Context, s store.SyncStore, keys ...store.Key) {
	t.Helper()
	for _, k := range keys {
		if err := s.UpsertKey(ctx, k); err != nil {
			t.Fatalf("upsert %s: %v", k.GetKeyName(), err)
		}
	}
}

// ciliumClient connects Cilium's own kvstore client to srv; cancel stops
// it (the caller closes backend after its users are done).
func ciliumClient(t *testing.T, log *slog.Logger, srv *kvstoretest.Server) (context.Context, context.CancelFunc, kvstore.BackendOperations) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	backend, errs := kvstore.NewClient(ctx, log, kvstore.EtcdBackendName,
		map[string]string{kvstore.EtcdOptionConfig: srv.WriteConfigFile()}, kvstore.ExtraOptions{})
	if err := <-errs; err != nil {
		cancel()
		t.Fatalf("cilium kvstore client: %v", err)
	}
	return ctx, cancel, backend
}
