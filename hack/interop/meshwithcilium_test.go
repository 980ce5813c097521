package interop_test

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary/cli"
	"github.com/apiary-net/apiary/hack/interop"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// employeesToProtectedDB lets cilium1's employees (and only them) reach
// apiary1's protected-db on 6379/TCP: the seed's l4 policy, with the
// Cilium cluster as the remote.
const employeesToProtectedDB = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: cilium1-employees-to-db, namespace: default}
spec:
  endpointSelector:
    matchLabels: {app: protected-db, io.cilium.k8s.policy.cluster: apiary1}
  ingress:
  - fromEndpoints:
    - matchLabels: {app: employee, io.cilium.k8s.policy.cluster: cilium1, k8s:io.kubernetes.pod.namespace: istio-space}
    toPorts: [{ports: [{port: "6379", protocol: TCP}]}]
`

// TestApiaryMeshesWithCilium meshes an apiary agent of cluster apiary1
// (id 1, its own etcd) with cluster cilium1 (id 2), which Cilium's own
// writers publish into another etcd (TLS on both): the agent reports the
// remote ready, lists its nodes, identities and ipcache entries as
// clustermesh entries, resolves a remote pod's identity in a policy
// trace, and forgets a node and an ipcache entry Cilium's writers delete.
func TestApiaryMeshesWithCilium(t *testing.T) {
	etcdA := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	etcdB := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	want := interop.ExampleCiliumCluster("cilium1", 2)
	pub := interop.PublishCiliumCluster(t, etcdB, want)

	meshDir := t.TempDir()
	cfg, err := os.ReadFile(etcdB.WriteConfigFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(meshDir, "cilium1"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	a := interop.StartApiaryAgent(t, etcdA, "apiary1", 1, "apiary-node", "192.0.2.1", "clustermesh-config="+meshDir)
	db := a.AddPod(t, interop.Pod{Namespace: "default", Name: "protected-db-0", ServiceAccount: "db",
		IP: netip.MustParseAddr("10.1.0.10"), Labels: []string{"k8s:app=protected-db"}, EndpointID: 1})

	var remote models.RemoteCluster
	celltest.EventuallyWithin(t, "cilium1 ready in GET /v1/cluster/mesh", time.Minute, func() bool {
		m, err := a.Client.ClusterMesh(t.Context())
		if err != nil || len(m.Clusters) != 1 {
			return false
		}
		remote = m.Clusters[0]
		return remote.Name == "cilium1" && remote.Ready && remote.Connected
	})
	if !remote.Config.Found || remote.Config.ClusterID != 2 || !remote.Config.SyncedCanaries {
		t.Errorf("cilium1's cluster config as apiary read it: %+v", remote.Config)
	}
	t.Logf("apiary clustermesh status:\n%s", cliOutput(t, a.Client.SocketPath(), "clustermesh", "status"))

	t.Run("nodes", func(t *testing.T) {
		celltest.EventuallyWithin(t, "cilium1's nodes in node list", 30*time.Second, func() bool {
			return slices.Equal(remoteNodes(t, a), []string{"cilium1/worker-1", "cilium1/worker-2"})
		})
		t.Logf("apiary node list:\n%s", cliOutput(t, a.Client.SocketPath(), "node", "list"))
	})

	t.Run("identities", func(t *testing.T) {
		ids, err := a.Client.IdentityList(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint32][]string{}
		for _, id := range ids {
			if slices.Contains(id.Labels, "k8s:io.cilium.k8s.policy.cluster=cilium1") {
				got[id.ID] = id.Labels
			}
		}
		if len(got) != len(want.Identities) {
			t.Errorf("identities of cilium1: %v, want %d", got, len(want.Identities))
		}
		for id, lbls := range want.Identities {
			gotLabels := got[uint32(id)]
			slices.Sort(lbls)
			slices.Sort(gotLabels)
			if !slices.Equal(gotLabels, lbls) {
				t.Errorf("identity %d: labels %v, want %v", id, gotLabels, lbls)
			}
		}
	})

	t.Run("ipcache", func(t *testing.T) {
		nodeIP, err := a.Client.IPCacheGet(t.Context(), "192.0.2.101")
		if err != nil || nodeIP.Source != "clustermesh" || nodeIP.Reserved != "remote-node" {
			t.Errorf("worker-1's address in the ipcache: %+v, %v; want a clustermesh remote-node entry", nodeIP, err)
		}
		entries := remoteIPCache(t, a)
		if len(entries) != len(want.Endpoints) {
			t.Fatalf("clustermesh ipcache entries: %+v, want %d", entries, len(want.Endpoints))
		}
		for _, w := range want.Endpoints {
			e, ok := entries[w.IP.String()+"/32"]
			if !ok || e.Identity != uint32(w.ID) || e.TunnelPeer != w.HostIP.String() || e.K8sPodName != w.K8sPodName {
				t.Errorf("ipcache %s = %+v (present %t), want identity %d on %s", w.IP, e, ok, w.ID, w.HostIP)
			}
		}
	})

	t.Run("global services", func(t *testing.T) {
		var got []models.GlobalService
		celltest.EventuallyWithin(t, "cilium1's global service in GET /v1/service", 30*time.Second, func() bool {
			var err error
			got, err = a.Client.Services(t.Context())
			return err == nil && len(got) == 1
		})
		g := got[0]
		if g.Namespace != "istio-space" || g.Name != "employee" || len(g.Clusters) != 1 ||
			g.Clusters[0].Cluster != "cilium1" || g.Clusters[0].ClusterID != 2 ||
			strings.Join(g.Clusters[0].Frontends, ",") != "10.96.0.20:80/TCP (http)" ||
			strings.Join(g.Clusters[0].Backends, ",") != "10.2.1.10:8080/TCP (http)" {
			t.Errorf("global service as apiary merged it = %+v", g)
		}
		t.Logf("apiary service list --clusters:\n%s", cliOutput(t, a.Client.SocketPath(), "service", "list", "--clusters"))
	})

	t.Run("policy trace from the remote pods", func(t *testing.T) {
		if _, err := a.Client.PolicyPut(t.Context(), []byte(employeesToProtectedDB)); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name, from string
			want       bool
			wantID     uint32
		}{
			{name: "employee by pod", from: "cilium1/istio-space/employee-0", want: true, wantID: uint32(want.Endpoints[0].ID)},
			{name: "employee by IP", from: want.Endpoints[0].IP.String(), want: true, wantID: uint32(want.Endpoints[0].ID)},
			{name: "stranger by pod", from: "cilium1/istio-space/stranger-0", want: false, wantID: uint32(want.Endpoints[1].ID)},
		} {
			t.Run(tt.name, func(t *testing.T) {
				tr, err := a.Client.PolicyTrace(t.Context(), models.PolicyTraceRequest{
					Source: []string{tt.from}, Destination: []string{"apiary1/default/protected-db-0"}, DPort: "6379/TCP"})
				if err != nil {
					t.Fatal(err)
				}
				if tr.SourceIdentity != tt.wantID || tr.DestinationIdentity != uint32(db) || tr.Allowed != tt.want {
					t.Errorf("trace %s -> protected-db: identities %d -> %d, allowed %t; want %d -> %d, allowed %t",
						tt.from, tr.SourceIdentity, tr.DestinationIdentity, tr.Allowed, tt.wantID, db, tt.want)
				}
			})
		}
	})

	t.Run("Cilium deletes a node and an ipcache entry", func(t *testing.T) {
		stranger := want.Endpoints[1].IP.String()
		pub.DeleteNode(t, "worker-2")
		pub.DeleteEndpoint(t, stranger)
		celltest.EventuallyWithin(t, "worker-2 gone from node list", 30*time.Second, func() bool {
			return slices.Equal(remoteNodes(t, a), []string{"cilium1/worker-1"})
		})
		celltest.EventuallyWithin(t, stranger+" gone from the ipcache", 30*time.Second, func() bool {
			entries := remoteIPCache(t, a)
			_, still := entries[stranger+"/32"]
			return !still && len(entries) == 1
		})
	})
}

// remoteNodes returns the node list's cilium1 nodes, as <cluster>/<name>,
// of source clustermesh.
func remoteNodes(t *testing.T, a *interop.ApiaryAgent) []string {
	t.Helper()
	nodes, err := a.Client.Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		if n.Cluster == "cilium1" && n.Source == "clustermesh" {
			names = append(names, n.Cluster+"/"+n.Name)
		}
	}
	slices.Sort(names)
	return names
}

// remoteIPCache returns the agent's ipcache entries of source
// clustermesh for pods (not the remote nodes' own addresses, which the
// node manager adds as remote-node), by prefix.
func remoteIPCache(t *testing.T, a *interop.ApiaryAgent) map[string]models.IPCacheEntry {
	t.Helper()
	list, err := a.Client.IPCacheList(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]models.IPCacheEntry{}
	for _, e := range list.Entries {
		if e.Source == "clustermesh" && e.K8sPodName != "" {
			out[e.Prefix] = e
		}
	}
	return out
}

// cliOutput runs the apiary CLI against the agent's socket.
func cliOutput(t *testing.T, socket string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if code := cli.Execute(ctx, append([]string{"--socket", socket}, args...), &out, &errOut); code != 0 {
		t.Fatalf("apiary %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}
