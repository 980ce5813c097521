package endpointcell_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/endpoint/endpointcell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/k8spolicy"
	"github.com/apiary-net/apiary/policy/policycell"
)

// mapSizes records, for every full policy map write, how many of the
// test's port keys it held.
type mapSizes struct {
	datapath.PolicyMapWriter

	mu    sync.Mutex
	sizes []int
}

func (m *mapSizes) SyncPolicyMap(id datapath.EndpointID, desired policy.MapState) (int, int, error) {
	m.mu.Lock()
	m.sizes = append(m.sizes, gatePorts(desired))
	m.mu.Unlock()
	return m.PolicyMapWriter.SyncPolicyMap(id, desired)
}

func (m *mapSizes) snapshot() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.sizes...)
}

const (
	gatePolicies  = 1000
	gateFirstPort = 10000
)

// gatePorts counts the ingress keys of the test's policies.
func gatePorts(ms policy.MapState) int {
	n := 0
	for k := range ms {
		if k.Direction == policy.Ingress && k.PrefixLen == 16 && k.Port >= gateFirstPort && k.Port < gateFirstPort+gatePolicies {
			n++
		}
	}
	return n
}

// TestK8sGate1000Policies: with 1,000 CiliumNetworkPolicies already in
// the API server, an endpoint created while the agent starts gets all of
// them in its first policy map: no regeneration saw fewer.
func TestK8sGate1000Policies(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	createGatePolicies(t, srv)

	f := datapathtest.New()
	sizes := &mapSizes{}
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	var caches k8s.CacheSync
	celltest.StartWithFlags(t, []string{
		"socket-path=" + socket, "state-dir=" + t.TempDir(), "cluster-name=c1", "cluster-id=1",
		"node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24,fd00:1::/120",
		"k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken),
	},
		api.Cell, status.Cell, localnode.Cell, statedir.Cell, kvstorecell.Cell, store.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, k8s.Cell, k8spolicy.Cell,
		cell.Decorate(func(w datapath.PolicyMapWriter) datapath.PolicyMapWriter {
			sizes.PolicyMapWriter = w
			return sizes
		}, endpointcell.Cell),
		datapathtest.CellOf(f), celltest.Capture(&caches))
	c := client.New(socket)
	t.Cleanup(c.Close)

	// The request is made while the caches sync; it waits for the gate.
	ep, err := c.EndpointPut(context.Background(), 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: podLabels})
	if err != nil {
		t.Fatalf("PUT /v1/endpoint/1: %v", err)
	}
	if pending, open := caches.Pending(); !open || len(pending) > 0 {
		t.Fatalf("endpoint created before the gate opened (pending %v)", pending)
	}
	ms, ok := f.PolicyMap(datapath.EndpointID(ep.ID))
	if !ok || gatePorts(ms) != gatePolicies {
		t.Fatalf("policy map holds %d of the %d policies' ports", gatePorts(ms), gatePolicies)
	}
	got := sizes.snapshot()
	if len(got) == 0 {
		t.Fatal("no policy map written")
	}
	for i, n := range got {
		if n != gatePolicies {
			t.Fatalf("policy map write %d held %d of the %d policies' ports (all writes: %v)", i, n, gatePolicies, got)
		}
	}
}

// createGatePolicies creates the 1,000 policies, each allowing one port
// to app=web, with a few requests in flight.
func createGatePolicies(t *testing.T, srv *k8stest.Server) {
	t.Helper()
	ri := srv.Dynamic().Resource(k8s.CNPResource).Namespace("default")
	work := make(chan int)
	errs := make(chan error, gatePolicies)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				_, err := ri.Create(context.Background(), gatePolicy(i), metav1.CreateOptions{})
				errs <- err
			}
		})
	}
	for i := range gatePolicies {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("create policy: %v", err)
		}
	}
}

func gatePolicy(i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
		"metadata": map[string]any{"name": fmt.Sprintf("port-%d", i), "namespace": "default"},
		"spec": map[string]any{
			"endpointSelector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"ingress": []any{map[string]any{"toPorts": []any{map[string]any{
				"ports": []any{map[string]any{"port": fmt.Sprint(gateFirstPort + i), "protocol": "TCP"}},
			}}}},
		},
	}}
}
