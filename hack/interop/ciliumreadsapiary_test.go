package interop_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cilium/cilium/api/v1/models"
	ciliumidentity "github.com/cilium/cilium/pkg/identity"
	ciliumlabels "github.com/cilium/cilium/pkg/labels"
	nodestore "github.com/cilium/cilium/pkg/node/store"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/hack/interop"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// TestKVStoreMeshReadsApiary points Cilium's KVStoreMesh at the etcd of
// an apiary cluster of two agents: it must find the cluster config and
// every sync canary, report the cluster ready with its nodes, endpoints
// and identities, and mirror exactly what apiary published.
func TestKVStoreMeshReadsApiary(t *testing.T) {
	remote := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	a1 := interop.StartApiaryAgent(t, remote, "apiary1", 7, "node-1", "192.0.2.11")
	a2 := interop.StartApiaryAgent(t, remote, "apiary1", 7, "node-2", "192.0.2.12")
	a1.AddPod(t, interop.Pod{Namespace: "default", Name: "web-0", ServiceAccount: "web", EndpointID: 11,
		IP: netip.MustParseAddr("10.7.1.5"), Labels: []string{"k8s:app=web"},
		NamedPorts: []policyapi.NamedPort{{Name: "http", Port: 8080, Protocol: "TCP"}}})
	a2.AddPod(t, interop.Pod{Namespace: "default", Name: "protected-db-0", ServiceAccount: "db", EndpointID: 21,
		IP: netip.MustParseAddr("10.7.2.5"), Labels: []string{"k8s:app=protected-db"},
		NamedPorts: []policyapi.NamedPort{{Name: "redis", Port: 6379, Protocol: "TCP"}}})
	a2.AddPod(t, interop.Pod{Namespace: "default", Name: "web-1", ServiceAccount: "web", EndpointID: 22,
		IP: netip.MustParseAddr("10.7.2.6"), Labels: []string{"k8s:app=web"}})

	raw := remote.Client()
	celltest.EventuallyWithin(t, "apiary's entries in etcd", 30*time.Second, func() bool {
		return len(list(t, raw, "cilium/state/ip/v1/default/")) == 3 &&
			len(list(t, raw, "cilium/state/nodes/v1/apiary1/")) == 2 &&
			len(list(t, raw, "cilium/state/identities/v1/id/")) == 2
	})

	local := kvstoretest.StartServer(t)
	km := interop.StartKVStoreMesh(t, "cilium-mesh", 1, local, map[string]*kvstoretest.Server{"apiary1": remote})

	var st *models.RemoteCluster
	// ready fetches KVStoreMesh's status of apiary1 into st.
	ready := func() bool {
		st = &models.RemoteCluster{}
		for _, rc := range km.Status() {
			if rc.Name == "apiary1" {
				st = rc
			}
		}
		return st.Ready
	}
	if !eventually(60*time.Second, func() bool {
		return ready() && st.NumNodes == 2 && st.NumEndpoints == 3 && st.NumIdentities == 2
	}) {
		t.Fatalf("KVStoreMesh status of apiary1: %s", dump(st))
	}
	t.Logf("KVStoreMesh status of apiary1: %s", dump(st))
	if st.Config == nil || !st.Config.Required || !st.Config.Retrieved || st.Config.ClusterID != 7 || !st.Connected {
		t.Errorf("config/connection = %s", dump(st))
	}

	checkCiliumDecodes(t, raw)
	lraw := local.Client()
	checkMirror(t, raw, lraw)
	var cfg map[string]any
	if v := get(t, lraw, "cilium/cluster-config/apiary1"); json.Unmarshal([]byte(v), &cfg) != nil ||
		!strings.Contains(v, `"id":7`) || !strings.Contains(v, `"cached":true`) {
		t.Errorf("cluster config KVStoreMesh propagated = %q", v)
	}

	// Changes after the initial sync reach KVStoreMesh too: a new pod,
	// and the publisher agent stopping (its node and endpoints go with
	// it; the other agent takes the cluster config over).
	a1.AddPod(t, interop.Pod{Namespace: "default", Name: "web-2", ServiceAccount: "web", EndpointID: 12,
		IP: netip.MustParseAddr("10.7.1.6"), Labels: []string{"k8s:app=web"}})
	if !eventually(30*time.Second, func() bool { return ready() && st.NumEndpoints == 4 }) {
		t.Fatalf("KVStoreMesh status of apiary1 after a new pod: %s", dump(st))
	}
	checkMirror(t, raw, lraw)
	leader, other := a1, a2
	if a2.Publisher.Leader() {
		leader, other = a2, a1
	}
	if msg := other.ModuleHealth(t, "clustermesh-publish"); !strings.HasPrefix(msg, "standby: ") {
		t.Errorf("%s's publisher health = %q, want standby", other.Name, msg)
	}
	leader.Stop(t)
	celltest.EventuallyWithin(t, other.Name+" publishes the cluster config", 30*time.Second, func() bool {
		return other.Publisher.Leader() &&
			other.ModuleHealth(t, "clustermesh-publish") == "leader: publishing cilium/cluster-config/apiary1 and the sync canaries"
	})
	// Each agent ran two of the four pods.
	if !eventually(60*time.Second, func() bool {
		ready()
		return st.Ready && st.NumNodes == 1 && st.NumEndpoints == 2 && st.Config.Retrieved
	}) {
		t.Fatalf("KVStoreMesh status of apiary1 after %s stopped: %s", leader.Name, dump(st))
	}
	t.Logf("KVStoreMesh status of apiary1 after %s stopped: %s", leader.Name, dump(st))
	// node-1's lease has expired (its node is gone): what a KVStoreMesh
	// connecting now needs is there again, written by the other agent.
	celltest.EventuallyWithin(t, "the cluster config and every canary after the leader's lease expired", 30*time.Second, func() bool {
		ok := get(t, raw, "cilium/cluster-config/apiary1") != ""
		for _, c := range []string{"nodes", "ip", "identities", "services"} {
			ok = ok && get(t, raw, "cilium/synced/apiary1/cilium/state/"+c+"/v1") != ""
		}
		return ok
	})
	checkMirror(t, raw, lraw)
}

// checkCiliumDecodes reads what apiary published with the decoders and
// validators a Cilium agent applies to a remote cluster's entries.
func checkCiliumDecodes(t *testing.T, raw *clientv3.Client) {
	t.Helper()
	clusterID := uint32(7)
	newNode := nodestore.ValidatingKeyCreator(nodestore.ClusterNameValidator("apiary1"), nodestore.NameValidator(),
		nodestore.ClusterIDValidator(&clusterID))
	for name, v := range list(t, raw, "cilium/state/nodes/v1/apiary1/") {
		n := newNode().(*nodestore.ValidatingNode)
		if err := n.Unmarshal(name, []byte(v)); err != nil {
			t.Errorf("Cilium refuses node %s: %v", name, err)
		} else if ip := n.GetNodeIP(false); ip == nil || !strings.HasPrefix(ip.String(), "192.0.2.1") {
			t.Errorf("Cilium reads node %s with IP %v", name, ip)
		}
	}
	minID, maxID := ciliumidentity.GetMinimalAllocationIdentity(clusterID), ciliumidentity.GetMaximumAllocationIdentity(clusterID)
	for name, v := range list(t, raw, "cilium/state/ip/v1/default/") {
		var p ciliumidentity.IPIdentityPair
		if err := p.Unmarshal(name, []byte(v)); err != nil {
			t.Errorf("Cilium refuses ipcache entry %s: %v", name, err)
			continue
		}
		if p.ID < minID || p.ID > maxID || p.K8sPodName == "" || p.K8sServiceAccount == "" || p.HostIP == nil {
			t.Errorf("Cilium reads ipcache entry %s as %+v (cluster 7's ids are %d..%d)", name, p, minID, maxID)
		}
	}
	for id, v := range list(t, raw, "cilium/state/identities/v1/id/") {
		lbls := ciliumlabels.NewLabelsFromSortedList(v)
		cluster, app := lbls["io.cilium.k8s.policy.cluster"], lbls["app"]
		if cluster.Source != "k8s" || cluster.Value != "apiary1" || app.Source != "k8s" || app.Value == "" {
			t.Errorf("Cilium reads identity %s as %v", id, lbls)
		}
	}
}

// checkMirror compares what apiary published with KVStoreMesh's copy.
func checkMirror(t *testing.T, raw, lraw *clientv3.Client) {
	t.Helper()
	mirrors := []struct{ state, cache string }{
		{"cilium/state/nodes/v1/apiary1/", "cilium/cache/nodes/v1/apiary1/"},
		{"cilium/state/ip/v1/default/", "cilium/cache/ip/v1/apiary1/"},
		{"cilium/state/identities/v1/id/", "cilium/cache/identities/v1/apiary1/id/"},
	}
	for _, m := range mirrors {
		checkPrefixMirror(t, raw, lraw, m.state, m.cache)
	}
}

// checkPrefixMirror waits until KVStoreMesh's etcd (lraw) holds under
// cache exactly what apiary's (raw) holds under state.
func checkPrefixMirror(t *testing.T, raw, lraw *clientv3.Client, state, cache string) {
	t.Helper()
	want := list(t, raw, state)
	if !eventually(30*time.Second, func() bool { want = list(t, raw, state); return equal(list(t, lraw, cache), want) }) {
		t.Errorf("%s mirrored as %s:\n got %v\nwant %v", state, cache, list(t, lraw, cache), want)
	}
}

func list(t *testing.T, c *clientv3.Client, prefix string) map[string]string {
	t.Helper()
	resp, err := c.Get(context.Background(), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		out[strings.TrimPrefix(string(kv.Key), prefix)] = string(kv.Value)
	}
	return out
}

func get(t *testing.T, c *clientv3.Client, key string) string {
	t.Helper()
	resp, err := c.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// eventually polls cond (every 100ms) until it holds or timeout passes.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
