package clustermeshcell_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/clustermesh"
	"github.com/apiary-net/apiary/clustermesh/clustermeshcell"
	"github.com/apiary-net/apiary/policy/source"
)

// seedPolicy is the seed's two-cluster L4 policy: employees of
// cluster2's istio-space may reach protected-db of cluster1 on 6379/TCP.
const seedPolicy = "../../policy/testdata/clustermesh-l4-policy.yaml"

// TestTwoClusters meshes two clusters, each with its own TLS etcd (two
// agents in cluster1, one in cluster2) and mutual config files: each
// agent learns the other cluster's nodes, identities and ipcache entries
// only through the remote etcd, the seed's policy selects cluster2's
// employee and not its stranger, and removing the config file withdraws
// everything learned from that cluster.
func TestTwoClusters(t *testing.T) {
	c1, c2 := newCluster(t, "cluster1", 1), newCluster(t, "cluster2", 2)
	c1.writeMeshConfig(t, c2)
	c2.writeMeshConfig(t, c1)
	// Until our own publisher lands, the clusters' configs and canaries
	// are written as Cilium's clustermesh-apiserver writes them.
	c1.publishClusterConfig(t, true)
	c2.publishClusterConfig(t, true)

	a1 := startAgent(t, c1, "node-a1", "192.0.2.11")
	a2 := startAgent(t, c1, "node-a2", "192.0.2.12")
	b1 := startAgent(t, c2, "node-b1", "198.51.100.21")

	db := a1.pod("default", "protected-db-0", "protected-db", "10.3.3.3")
	employee := b1.pod("istio-space", "employee-0", "employee", "10.4.4.10")
	stranger := b1.pod("istio-space", "stranger-0", "stranger", "10.4.4.12")
	if got := fmt.Sprint(employee.ID >> 16); got != "2" {
		t.Fatalf("cluster2's employee has identity %d, want one of cluster id 2", employee.ID)
	}

	for _, a := range []*agent{a1, a2} {
		r := a.waitRemote(t, "cluster2", "ready with 1 node, 2 endpoints", func(r models.RemoteCluster) bool {
			return r.Ready && r.Nodes == 1 && r.Endpoints == 2 && r.Identities >= 2
		})
		if !r.Connected || r.Config.ClusterID != 2 || !r.Config.SyncedCanaries || r.Status != "ready" {
			t.Errorf("cluster2 as cluster1 sees it = %+v", r)
		}
		n, ok := a.hasNode("cluster2", "node-b1")
		if !ok || n.Source != source.ClusterMesh {
			t.Errorf("node cluster2/node-b1 = %+v, %v; want it with source clustermesh", n, ok)
		}
		// Ready says the remote's entries were read; the ipcache resolves
		// them in its own rounds (with the remote node's pod CIDRs, whose
		// fallback entries get CIDR identities).
		want := fmt.Sprintf("%d/clustermesh", employee.ID)
		celltest.Eventually(t, "ipcache 10.4.4.10 = "+want, func() bool { return a.entry("10.4.4.10") == want })
		if id := a.alloc.LookupIdentityByID(employee.ID); id == nil || !id.Labels.Equal(employee.Labels) {
			t.Errorf("identity %d = %v, want %s", employee.ID, id, employee.Labels)
		}
	}
	r := b1.waitRemote(t, "cluster1", "ready with 2 nodes", func(r models.RemoteCluster) bool {
		return r.Ready && r.Nodes == 2 && r.Endpoints == 1
	})
	if got := joined(b1.clusterNodes("cluster1")); got != "node-a1/clustermesh,node-a2/clustermesh" {
		t.Errorf("cluster2 sees cluster1's nodes %s (status %+v)", got, r)
	}
	if id := b1.alloc.LookupIdentityByID(db.ID); id == nil {
		t.Errorf("cluster2 does not know cluster1's identity %d", db.ID)
	}

	t.Run("policy selects the remote employee", func(t *testing.T) {
		ctx := context.Background()
		if _, err := a1.client.PolicyPut(ctx, readFile(t, seedPolicy)); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			from string
			want bool
		}{
			{from: "cluster2/istio-space/employee-0", want: true},
			{from: "cluster2/istio-space/stranger-0", want: false},
		} {
			tr, err := a1.client.PolicyTrace(ctx, models.PolicyTraceRequest{
				Source: []string{tt.from}, Destination: []string{"cluster1/default/protected-db-0"}, DPort: "6379/TCP",
			})
			if err != nil {
				t.Fatalf("trace from %s: %v", tt.from, err)
			}
			if tr.Allowed != tt.want {
				t.Errorf("trace from %s: allowed = %v, want %v (source identity %d)", tt.from, tr.Allowed, tt.want, tr.SourceIdentity)
			}
		}
		_ = stranger
	})

	t.Run("status line", func(t *testing.T) {
		// The collector probes every status.ProbeInterval: the line that
		// turned Ok may have been probed when cluster2 was ready but its
		// node not yet written, so wait for the details too.
		var line models.StatusEntry
		defer func() {
			if t.Failed() {
				t.Logf("last ClusterMesh line: %q %q", line.Message, line.Details)
			}
		}()
		celltest.EventuallyWithin(t, "the ClusterMesh line with cluster2's node", 30*time.Second, func() bool {
			st, err := a1.client.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range st.Entries {
				if e.Name == "ClusterMesh" {
					line = e
				}
			}
			return line.Message == "1/1 clusters ready, 0 global-services" && len(line.Details) == 2 &&
				strings.HasPrefix(line.Details[0], "cluster2: ready, 1 nodes, ") &&
				strings.HasSuffix(line.Details[0], "0 failures (last: never)") && strings.HasPrefix(line.Details[1], "└  etcd: 1/1 connected")
		})
	})

	t.Run("metrics", func(t *testing.T) {
		for _, tt := range []struct {
			name, cluster string
			want          float64
		}{
			{"apiary_clustermesh_remote_clusters", "", 1},
			{"apiary_clustermesh_remote_cluster_readiness_status", "cluster2", 1},
			{"apiary_clustermesh_remote_cluster_nodes", "cluster2", 1},
			{"apiary_clustermesh_remote_cluster_failures", "cluster2", 0},
			{"apiary_clustermesh_remote_cluster_last_failure_ts", "cluster2", 0},
		} {
			if got := a1.metric(tt.name, tt.cluster); got != tt.want {
				t.Errorf("%s{target_cluster=%q} = %v, want %v", tt.name, tt.cluster, got, tt.want)
			}
		}
	})

	t.Run("remote changes follow", func(t *testing.T) {
		b1.pod("istio-space", "employee-1", "employee", "10.4.4.11")
		celltest.Eventually(t, "cluster1 sees the new pod", func() bool {
			return a1.entry("10.4.4.11") == fmt.Sprintf("%d/clustermesh", employee.ID)
		})
		if _, err := b1.ipc.DeleteLocalEndpoint(mustAddr("10.4.4.11")); err != nil {
			t.Fatal(err)
		}
		celltest.Eventually(t, "cluster1 forgets the deleted pod", func() bool { return a1.entry("10.4.4.11") == "" })
	})

	t.Run("removed config withdraws everything", func(t *testing.T) {
		if err := os.Remove(filepath.Join(c1.meshDir, "cluster2")); err != nil {
			t.Fatal(err)
		}
		for _, a := range []*agent{a1, a2} {
			celltest.Eventually(t, "cluster2 forgotten", func() bool {
				return len(a.mesh().Clusters) == 0 && len(a.clusterNodes("cluster2")) == 0 &&
					len(a.clusterEntries()) == 0 && a.alloc.LookupIdentityByID(employee.ID) == nil
			})
		}
		// cluster2 still sees cluster1: removal is one-sided.
		if r := b1.remote("cluster1"); !r.Ready {
			t.Errorf("cluster2's view of cluster1 = %+v, want ready", r)
		}
	})

	t.Run("agent shutdown withdraws nothing", func(t *testing.T) {
		if err := b1.hive.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := joined(b1.clusterNodes("cluster1")); got != "node-a1/clustermesh,node-a2/clustermesh" {
			t.Errorf("cluster1's nodes after cluster2's agent stopped = %s, want them kept", got)
		}
		if got := b1.entry("10.3.3.3"); got != fmt.Sprintf("%d/clustermesh", db.ID) {
			t.Errorf("ipcache 10.3.3.3 after stop = %q, want it kept", got)
		}
		if b1.alloc.LookupIdentityByID(db.ID) == nil {
			t.Errorf("identity %d forgotten at stop", db.ID)
		}
	})
}

func mustAddr(s string) netipAddr { return parseAddr(s) }

// TestWaitForRemotesSynced: the first regeneration's hook returns once
// every remote synced, and gives up after --clustermesh-sync-timeout
// naming the clusters that are not ready.
func TestWaitForRemotesSynced(t *testing.T) {
	c1, c2 := newCluster(t, "cluster1", 1), newCluster(t, "cluster2", 2)
	c2.publishClusterConfig(t, false)
	c1.writeMeshConfig(t, c2)
	celltest.ReplaceFile(t, filepath.Join(c1.meshDir, "cluster9"), "endpoints:\n- http://127.0.0.1:1\n")
	var w clustermeshcell.SyncWaiter
	a := startAgentWithFlags(t, c1, "node-a1", "192.0.2.11", []string{"clustermesh-sync-timeout=2s"}, celltest.Capture(&w))
	// The timeout runs from the call: on a loaded machine (a parallel
	// -race test run) connecting to cluster2's TLS etcd alone can take
	// longer than 2s, so cluster2 is waited for first (not timed), and the
	// timed call can only be waiting for cluster9.
	a.waitRemote(t, "cluster2", "ready", func(r models.RemoteCluster) bool { return r.Ready })
	start := time.Now()
	err := w.WaitForRemotesSynced(context.Background())
	if !errors.Is(err, clustermesh.ErrSyncTimeout) || !strings.Contains(err.Error(), "cluster9 (") || strings.Contains(err.Error(), "cluster2 (") {
		t.Errorf("WaitForRemotesSynced = %v, want the timeout naming cluster9 only", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("WaitForRemotesSynced took %s, want about the 2s timeout", took)
	}
	if err := os.Remove(filepath.Join(c1.meshDir, "cluster9")); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "cluster9 gone and cluster2 synced", func() bool {
		return w.WaitForRemotesSynced(context.Background()) == nil
	})
}

// readFile returns the content of a test file.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
