package identitycell_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/labels"
)

// TestRemoteIdentities: a remote cluster's identities, read from its own
// etcd by a ClusterWatcher, join the identity cache (by id, in the list,
// by labels naming that cluster) and reach the observers; what is not
// the remote's is refused; a drained watcher withdraws them all.
func TestRemoteIdentities(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	var remote identitycache.RemoteIdentities
	a := startAgent(t, agentConfig{srv: srv, flags: []string{"cluster-name=cluster1", "cluster-id=1"},
		extra: []cell.Cell{celltest.Capture(&remote)}})
	remoteSrv := kvstoretest.StartServer(t)
	put := func(key, value string) {
		t.Helper()
		_, err := remoteSrv.Client().Put(context.Background(), key, value)
		must(t, err)
	}
	first := identity.NumericIdentity(2<<16 + 256)
	employee := fmt.Sprintf("k8s:app=employee;k8s:%s=cluster2;k8s:%s=istio-space;", labels.KeyPolicyCluster, labels.KeyPodNamespace)
	put(fmt.Sprintf("cilium/state/identities/v1/id/%d", first), employee)
	put(fmt.Sprintf("cilium/state/identities/v1/id/%d", first+1), "k8s:app=stranger;")
	put(fmt.Sprintf("cilium/state/identities/v1/id/%d", 3<<16+300), "k8s:app=other;")                                    // cluster 3's range
	put(fmt.Sprintf("cilium/state/identities/v1/id/%d", first+2), "k8s:app=x;k8s:"+labels.KeyPolicyCluster+"=cluster3;") // labels of another cluster

	cluster2 := cluster.Info{ClusterName: "cluster2", ClusterID: 2, MaxConnectedClusters: 255}
	w := remote.NewWatcher(cluster2, layout.IdentitiesIDPrefix, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Watch(ctx, remoteSrv.NewBackend())
	}()
	celltest.Eventually(t, "the remote identities", func() bool { return w.Store().Synced() && a.alloc.LookupIdentityByID(first+1) != nil })
	cancel()
	<-done

	if id := a.alloc.LookupIdentityByID(first); id == nil || id.Labels.SortedList() != employee {
		t.Errorf("identity %d = %v, want %s", first, id, employee)
	}
	lbls, err := labels.ParseSortedList(employee)
	must(t, err)
	if id := a.alloc.LookupIdentity(lbls); id == nil || id.ID != first {
		t.Errorf("LookupIdentity(%s) = %v, want %d", lbls, id, first)
	}
	ids := a.alloc.GetIdentities()
	if !slices.ContainsFunc(ids, func(id *identity.Identity) bool { return id.ID == first+1 }) {
		t.Errorf("GetIdentities has no %d", first+1)
	}
	listed, err := a.client.IdentityList(context.Background())
	must(t, err)
	if !slices.ContainsFunc(listed, func(id models.Identity) bool { return id.ID == uint32(first) }) {
		t.Errorf("GET /v1/identity (apiary identity list) has no remote identity %d", first)
	}
	if st := w.Store().SkipStats(); st.Refused != 2 || st.Malformed != 0 {
		t.Errorf("skipped = %+v, want 2 refused", st)
	}
	wantEvents := func(want ...string) {
		t.Helper()
		celltest.Eventually(t, fmt.Sprint("observer events ", want), func() bool {
			ev := a.observer.events()
			for _, w := range want {
				if !slices.Contains(ev, w) {
					return false
				}
			}
			return true
		})
	}
	wantEvents(fmt.Sprintf("+%d", first), fmt.Sprintf("+%d", first+1))

	w.Drain()
	if a.alloc.LookupIdentityByID(first) != nil || a.alloc.LookupIdentity(lbls) != nil {
		t.Error("drained identities are still known")
	}
	wantEvents(fmt.Sprintf("-%d", first), fmt.Sprintf("-%d", first+1))
}
