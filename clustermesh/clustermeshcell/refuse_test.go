package clustermeshcell_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// TestRefusedRemotes: remotes that must not be meshed are refused, and
// the status says precisely why. One etcd serves several remote names
// (the cluster config key is per name).
func TestRefusedRemotes(t *testing.T) {
	c1 := newCluster(t, "cluster1", 1)
	shared := newCluster(t, "shared", 0)
	as := func(name string, id uint32) *meshCluster {
		return &meshCluster{name: name, id: id, srv: shared.srv}
	}
	ownID, outOfRange, otherMesh := as("cluster3", 1), as("cluster4", 300), as("cluster5", 5)
	dupA, dupB, noConfig := as("cluster6", 6), as("cluster7", 6), as("cluster10", 10)
	for _, c := range []*meshCluster{ownID, outOfRange, dupA} {
		c.publishClusterConfig(t, true)
	}
	otherMesh.put(t, "cilium/cluster-config/cluster5", `{"id":5,"capabilities":{"maxConnectedClusters":511}}`)
	noCanary := as("cluster11", 11) // promises canaries, has none yet
	noCanary.put(t, "cilium/cluster-config/cluster11", `{"id":11,"capabilities":{"syncedCanaries":true}}`)

	for _, c := range []*meshCluster{ownID, outOfRange, otherMesh, dupA, noConfig, noCanary} {
		c1.writeMeshConfig(t, c)
	}
	// A CA that did not sign the server's certificate.
	other := kvstoretest.NewCA(t, c1.meshDir, "other")
	wrongCA := as("cluster8", 8)
	cfg := wrongCA.meshConfig(t, c1.meshDir)
	cfg = strings.Replace(cfg, "trusted-ca-file: cluster8-ca.crt", "trusted-ca-file: "+filepath.Base(other.CertFile), 1)
	celltest.ReplaceFile(t, filepath.Join(c1.meshDir, "cluster8"), cfg)
	// Nothing listens there.
	celltest.ReplaceFile(t, filepath.Join(c1.meshDir, "cluster9"), "endpoints:\n- http://127.0.0.1:1\n")
	// Refused and ignored files.
	celltest.ReplaceFile(t, filepath.Join(c1.meshDir, "Bad_Name"), "endpoints:\n- http://127.0.0.1:1\n")
	celltest.ReplaceFile(t, filepath.Join(c1.meshDir, "README"), "not a cluster config\n")
	celltest.ReplaceFile(t, filepath.Join(c1.meshDir, "cluster1"), "endpoints:\n- http://127.0.0.1:1\n")

	a := startAgent(t, c1, "node-a1", "192.0.2.11")
	tests := []struct {
		cluster string
		want    string
	}{
		{cluster: "cluster3", want: "cluster config: cilium/cluster-config/cluster3: cluster id: 1 is this cluster's own (cluster1)"},
		{cluster: "cluster4", want: "cluster id: 300 is out of range 1..255"},
		{cluster: "cluster5", want: "capabilities.maxConnectedClusters: 511 differs from this cluster's --max-connected-clusters=255"},
		{cluster: "cluster8", want: "tls: "},
		{cluster: "cluster9", want: "dial: "},
		{cluster: "cluster10", want: "cluster config: cilium/cluster-config/cluster10 not found within 2s (required)"},
	}
	for _, tt := range tests {
		t.Run(tt.cluster, func(t *testing.T) {
			r := a.waitRemote(t, tt.cluster, "refused: "+tt.want, func(r models.RemoteCluster) bool {
				return strings.Contains(r.Status, tt.want)
			})
			if r.Ready || r.Connected || r.Failures == 0 || r.LastFailure == nil || !strings.Contains(r.LastError, tt.want) {
				t.Errorf("%s = %+v, want refused, not connected, with failures", tt.cluster, r)
			}
		})
	}
	t.Run("waiting for a sync canary", func(t *testing.T) {
		r := a.waitRemote(t, "cluster11", "waiting for its canary", func(r models.RemoteCluster) bool {
			return r.Status == "waiting for sync canary of cilium/state/nodes/v1"
		})
		if !r.Connected || r.Ready {
			t.Errorf("cluster11 = %+v, want connected, not ready", r)
		}
		noCanary.put(t, "cilium/synced/cluster11/cilium/state/nodes/v1", "2026-11-23T10:00:00Z")
		a.waitRemote(t, "cluster11", "waiting for the next canary", func(r models.RemoteCluster) bool {
			return r.Status == "waiting for sync canary of cilium/state/ip/v1"
		})
	})
	t.Run("unreachable remotes leave the agent healthy", func(t *testing.T) {
		a.waitRemote(t, "cluster9", "failing", func(r models.RemoteCluster) bool { return r.Failures > 1 })
		var h *models.Healthz
		var err error
		deadline := time.Now().Add(20 * time.Second)
		for h, err = a.client.Healthz(context.Background()); err != nil || h.Status != models.HealthzOK; h, err = a.client.Healthz(context.Background()) {
			if time.Now().After(deadline) {
				t.Fatalf("healthz = %+v, %v; want ok while remotes fail", h, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Run("tls reason names the certificate", func(t *testing.T) {
		if r := a.remote("cluster8"); !strings.Contains(r.LastError, "certificate") || !strings.Contains(r.Status, "tls: ") {
			t.Errorf("cluster8 status = %q, last error %q, want the TLS handshake's certificate error", r.Status, r.LastError)
		}
	})

	t.Run("duplicate cluster id", func(t *testing.T) {
		a.waitRemote(t, "cluster6", "ready", func(r models.RemoteCluster) bool { return r.Ready })
		dupB.publishClusterConfig(t, true)
		c1.writeMeshConfig(t, dupB)
		r := a.waitRemote(t, "cluster7", "refused", func(r models.RemoteCluster) bool {
			return strings.Contains(r.Status, `cluster id 6 is already used by connected remote cluster "cluster6"`)
		})
		if r.Connected || r.Ready {
			t.Errorf("cluster7 = %+v, want refused", r)
		}
		a.waitRemote(t, "cluster6", "shows the conflict", func(r models.RemoteCluster) bool {
			return r.Ready && strings.Contains(r.Status, "cluster id 6 is also claimed by cluster7")
		})
	})

	t.Run("files", func(t *testing.T) {
		m := a.mesh()
		var names []string
		for _, c := range m.Clusters {
			names = append(names, c.Name)
		}
		if got := joined(names); got != "cluster10,cluster11,cluster3,cluster4,cluster5,cluster6,cluster7,cluster8,cluster9" {
			t.Errorf("clusters = %s, want neither our own, nor README, nor Bad_Name", got)
		}
		if len(m.Invalid) != 1 || m.Invalid[0].File != "Bad_Name" || !strings.Contains(m.Invalid[0].Error, "cluster name") {
			t.Errorf("invalid = %+v, want Bad_Name refused for its name", m.Invalid)
		}
	})
}
