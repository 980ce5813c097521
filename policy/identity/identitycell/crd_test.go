package identitycell_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
)

// crdAgent is a node of a cluster whose identities are CiliumIdentities
// on srv (mode crd by default: Kubernetes, no kvstore).
func crdAgent(t *testing.T, srv *k8stest.Server, node, ip string, flags ...string) *agent {
	t.Helper()
	flags = append([]string{"node-name=" + node, "cluster-name=c1", "cluster-id=1", "state-dir=" + t.TempDir(),
		"k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken)}, flags...)
	return startAgent(t, agentConfig{ip: ip, flags: flags, extra: []cell.Cell{k8s.Cell, statedir.Cell}})
}

// ciliumIdentities returns the CiliumIdentities of the API server, by
// their labels' canonical list, with their names.
func ciliumIdentities(t *testing.T, srv *k8stest.Server) map[string][]string {
	t.Helper()
	list, err := srv.Dynamic().Resource(k8s.CiliumIdentityResource).List(ctxFor(t), metav1.ListOptions{})
	must(t, err)
	out := map[string][]string{}
	for _, item := range list.Items {
		ident, err := identitycache.DecodeCiliumIdentity(clusterC1, &item)
		if err != nil {
			t.Fatalf("CiliumIdentity %s does not decode: %v", item.GetName(), err)
		}
		out[ident.Labels.SortedList()] = append(out[ident.Labels.SortedList()], item.GetName())
	}
	return out
}

// TestCRDConcurrentAllocation: two agents allocating the same label sets
// at the same moment end with one CiliumIdentity per set, of the
// cluster's range, in Cilium's shape, which both use.
func TestCRDConcurrentAllocation(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	a := crdAgent(t, srv, "node-a", "192.0.2.1")
	b := crdAgent(t, srv, "node-b", "192.0.2.2")
	must(t, a.alloc.WaitForInitialGlobalIdentities(ctxFor(t)))
	must(t, b.alloc.WaitForInitialGlobalIdentities(ctxFor(t)))

	const sets = 12
	got := map[string][2]identity.NumericIdentity{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range sets {
		for n, alloc := range []identity.Allocator{a.alloc, b.alloc} {
			wg.Go(func() {
				id, _, err := alloc.AllocateIdentity(ctxFor(t), pod(fmt.Sprintf("app-%d", i)))
				if err != nil {
					t.Errorf("node %d, app-%d: %v", n, i, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				pair := got[fmt.Sprint(i)]
				pair[n] = id.ID
				got[fmt.Sprint(i)] = pair
			})
		}
	}
	wg.Wait()
	first, last := identity.ClusterRange(clusterC1)
	for i, pair := range got {
		if pair[0] != pair[1] {
			t.Errorf("app-%s: node-a got %d, node-b got %d", i, pair[0], pair[1])
		}
		if pair[0] < first || pair[0] > last {
			t.Errorf("app-%s: id %d outside the cluster's range %d..%d", i, pair[0], first, last)
		}
	}
	// The losers' duplicates are deleted: one object per label set.
	celltest.Eventually(t, "one CiliumIdentity per label set", func() bool {
		objs := ciliumIdentities(t, srv)
		if len(objs) != sets {
			return false
		}
		for _, names := range objs {
			if len(names) != 1 {
				return false
			}
		}
		return true
	})
	obj, err := srv.Dynamic().Resource(k8s.CiliumIdentityResource).Get(ctxFor(t), got["0"][0].String(), metav1.GetOptions{})
	must(t, err)
	sec, _, _ := unstructured.NestedStringMap(obj.Object, "security-labels")
	want := map[string]string{"k8s:app": "app-0", "k8s:io.kubernetes.pod.namespace": "default", "k8s:io.cilium.k8s.policy.cluster": "c1"}
	if fmt.Sprint(sec) != fmt.Sprint(want) || obj.GetLabels()["io.kubernetes.pod.namespace"] != "default" {
		t.Errorf("CiliumIdentity %s: security-labels %v, labels %v; want %v and the namespace label", obj.GetName(), sec, obj.GetLabels(), want)
	}
	// Each node knows the other's identities through its watch.
	idB, _, err := b.alloc.AllocateIdentity(ctxFor(t), pod("only-b"))
	must(t, err)
	celltest.Eventually(t, "node-a learns node-b's identity", func() bool {
		got := a.alloc.LookupIdentityByID(idB.ID)
		return got != nil && got.Labels.Equal(idB.Labels)
	})
}

// TestCRDModeFlags: the mode follows the flag and what is configured;
// bad combinations fail naming the flag.
func TestCRDModeFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"kvstore without a kvstore", []string{"identity-allocation-mode=kvstore"}, "--identity-allocation-mode=kvstore: no kvstore"},
		{"crd without Kubernetes", []string{"identity-allocation-mode=crd"}, "--identity-allocation-mode=crd: kubernetes is not configured"},
		{"unknown mode", []string{"identity-allocation-mode=etcd"}, `--identity-allocation-mode: "etcd" is not "crd" or "kvstore"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := celltest.Populate(t, append([]string{"node-name=node-a", "node-ip=192.0.2.1"}, tc.flags...),
				kvstorecell.Cell, localnode.Cell, k8s.Cell, identitycell.Cell, cell.Invoke(func(identity.Allocator) {}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("populate: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestCRDGarbageCollection: an identity no CiliumEndpoint names and no
// agent holds is deleted after the grace period; one a CiliumEndpoint
// names is kept, and so is one the agent holds.
func TestCRDGarbageCollection(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	a := crdAgent(t, srv, "node-a", "192.0.2.1", "identity-gc-interval=100ms", "identity-heartbeat-timeout=500ms")
	must(t, a.alloc.WaitForInitialGlobalIdentities(ctxFor(t)))
	ctx := ctxFor(t)
	unused, _, err := a.alloc.AllocateIdentity(ctx, pod("unused"))
	must(t, err)
	used, _, err := a.alloc.AllocateIdentity(ctx, pod("used"))
	must(t, err)
	held, _, err := a.alloc.AllocateIdentity(ctx, pod("held"))
	must(t, err)
	for _, id := range []*identity.Identity{unused, used} {
		if _, err := a.alloc.Release(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	released := time.Now()
	cep := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
		"metadata": map[string]any{"name": "used", "namespace": "default"},
		"status":   map[string]any{"identity": map[string]any{"id": int64(used.ID)}}}}
	_, err = srv.Dynamic().Resource(k8s.CiliumEndpointResource).Namespace("default").Create(ctx, cep, metav1.CreateOptions{})
	must(t, err)

	celltest.Eventually(t, "the unused identity is deleted", func() bool {
		_, ok := ciliumIdentities(t, srv)[unused.Labels.SortedList()]
		return !ok
	})
	// Last seen held at most one 100ms round before the release.
	if d := time.Since(released); d < 400*time.Millisecond {
		t.Errorf("deleted %s after its release, within the 500ms grace period", d)
	}
	// Rounds go on (a second unused identity is collected too); the
	// other two stay.
	unused2, _, err := a.alloc.AllocateIdentity(ctx, pod("unused-2"))
	must(t, err)
	_, err = a.alloc.Release(ctx, unused2)
	must(t, err)
	celltest.Eventually(t, "the second unused identity is deleted", func() bool {
		_, ok := ciliumIdentities(t, srv)[unused2.Labels.SortedList()]
		return !ok
	})
	objs := ciliumIdentities(t, srv)
	for _, id := range []*identity.Identity{used, held} {
		if names := objs[id.Labels.SortedList()]; !slices.Equal(names, []string{id.ID.String()}) {
			t.Errorf("identity %d (%s): objects %v, want it kept", id.ID, id.Labels, names)
		}
	}
	if got := a.alloc.LookupIdentityByID(unused.ID); got != nil {
		t.Errorf("the deleted identity %d is still in the cache", unused.ID)
	}
}

// TestCRDRestartKeepsIdentities: a restarted agent gives a label set the
// identity the API server holds for it (restored before the first
// allocation), and re-creates an identity in use that was deleted.
func TestCRDRestartKeepsIdentities(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	a := crdAgent(t, srv, "node-a", "192.0.2.1")
	id, _, err := a.alloc.AllocateIdentity(ctxFor(t), pod("web"))
	must(t, err)
	must(t, a.hive.Stop(context.Background()))

	b := crdAgent(t, srv, "node-a", "192.0.2.1")
	again, isNew, err := b.alloc.AllocateIdentity(ctxFor(t), pod("web"))
	must(t, err)
	if again.ID != id.ID || isNew {
		t.Fatalf("after the restart: identity %d (new %v), want %d", again.ID, isNew, id.ID)
	}
	// Deleted while in use (by hand): the agent creates it again.
	must(t, srv.Dynamic().Resource(k8s.CiliumIdentityResource).Delete(ctxFor(t), id.ID.String(), metav1.DeleteOptions{}))
	celltest.Eventually(t, "the identity in use is re-created", func() bool {
		return slices.Equal(ciliumIdentities(t, srv)[id.Labels.SortedList()], []string{id.ID.String()})
	})
}

var clusterC1 = cluster.Info{ClusterName: "c1", ClusterID: 1, MaxConnectedClusters: 255}
