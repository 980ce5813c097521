package cluster_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
)

func TestClusterInfoValidate(t *testing.T) {
	tests := []struct {
		name string
		give cluster.Info
		want string // substring of the error; empty: valid
	}{
		{name: "default", give: cluster.DefaultInfo},
		{name: "id 511 in a mesh of 511", give: cluster.Info{ClusterName: "c-1", ClusterID: 511, MaxConnectedClusters: 511}},
		{name: "upper case name", give: cluster.Info{ClusterName: "Prod", MaxConnectedClusters: 255}, want: "--cluster-name"},
		{name: "33 characters", give: cluster.Info{ClusterName: strings.Repeat("a", 33), MaxConnectedClusters: 255}, want: "at most 32"},
		{name: "trailing dash", give: cluster.Info{ClusterName: "a-", MaxConnectedClusters: 255}, want: "--cluster-name"},
		{name: "id 256 in a mesh of 255", give: cluster.Info{ClusterName: "a", ClusterID: 256, MaxConnectedClusters: 255}, want: "--cluster-id: 256 is out of range 0..255"},
		{name: "mesh of 300", give: cluster.Info{ClusterName: "a", MaxConnectedClusters: 300}, want: "--max-connected-clusters: 300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestValidateRemote(t *testing.T) {
	local := cluster.Info{ClusterName: "cluster1", ClusterID: 1, MaxConnectedClusters: 255}
	tests := []struct {
		name   string
		remote string
		id     uint32
		want   string
	}{
		{name: "valid", remote: "cluster2", id: 2},
		{name: "id 0", remote: "cluster2", id: 0, want: "0 is not allowed"},
		{name: "own id", remote: "cluster2", id: 1, want: "this cluster's own"},
		{name: "out of range", remote: "cluster2", id: 300, want: "out of range 1..255"},
		{name: "bad name", remote: "Cluster_2", id: 2, want: "cluster name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := local.ValidateRemote(tt.remote, tt.id)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("ValidateRemote = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("ValidateRemote = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCiliumClusterConfigJSON(t *testing.T) {
	tests := []struct {
		name string
		give cluster.Info
		want string
	}{
		{name: "255", give: cluster.Info{ClusterName: "c1", ClusterID: 1, MaxConnectedClusters: 255},
			want: `{"id":1,"capabilities":{"syncedCanaries":true,"maxConnectedClusters":255}}`},
		{name: "511", give: cluster.Info{ClusterName: "c9", ClusterID: 300, MaxConnectedClusters: 511},
			want: `{"id":300,"capabilities":{"syncedCanaries":true,"maxConnectedClusters":511}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.give.CiliumClusterConfig())
			if err != nil || string(got) != tc.want {
				t.Fatalf("json = %s, %v; want %s", got, err, tc.want)
			}
			var back cluster.CiliumClusterConfig
			if err := json.Unmarshal([]byte(`{"id":7,"capabilities":{"syncedCanaries":true,"cached":true,`+
				`"maxConnectedClusters":255,"serviceExportsEnabled":false,"endpointSlicesExportMode":"endpointslices-only"}}`), &back); err != nil {
				t.Fatal(err)
			}
			if c := back.Capabilities; back.ID != 7 || !c.SyncedCanaries || !c.Cached || c.MaxConnectedClusters != 255 ||
				c.ServiceExportsEnabled == nil || *c.ServiceExportsEnabled || c.EndpointSlicesExportMode != "endpointslices-only" {
				t.Errorf("decoded %+v", back)
			}
		})
	}
}

func TestValidateRemoteConfig(t *testing.T) {
	local := cluster.Info{ClusterName: "cluster1", ClusterID: 1, MaxConnectedClusters: 255}
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "cilium's own", give: `{"id":2,"capabilities":{"syncedCanaries":true,"maxConnectedClusters":255,"serviceExportsEnabled":true}}`},
		{name: "no capabilities means 255", give: `{"id":2}`},
		{name: "id 0", give: `{"id":0}`, want: "0 is not allowed"},
		{name: "own id", give: `{"id":1}`, want: "this cluster's own"},
		{name: "out of range", give: `{"id":300,"capabilities":{"maxConnectedClusters":511}}`, want: "out of range 1..255"},
		{name: "other mesh size", give: `{"id":2,"capabilities":{"maxConnectedClusters":511}}`, want: "capabilities.maxConnectedClusters: 511 differs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := cluster.ParseClusterConfig("cilium/cluster-config/cluster2", []byte(tt.give))
			if err != nil {
				t.Fatal(err)
			}
			err = local.ValidateRemoteConfig("cluster2", cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("ValidateRemoteConfig = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("ValidateRemoteConfig = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := cluster.ParseClusterConfig("cilium/cluster-config/cluster2", []byte("{")); err == nil || !strings.Contains(err.Error(), "cilium/cluster-config/cluster2") {
		t.Errorf("ParseClusterConfig of garbage = %v, want an error naming the key", err)
	}
}
