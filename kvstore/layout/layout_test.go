package layout_test

import (
	"testing"

	"github.com/apiary-net/apiary/kvstore/layout"
)

// TestKeys pins every prefix, key and builder to the string Cilium v1.20
// uses (pkg/kvstore, pkg/node/store, pkg/ipcache, pkg/identity/cache,
// pkg/kvstore/allocator, pkg/clustermesh/store, pkg/clustermesh/clustercfg,
// pkg/kvstore/store): a change here breaks the mesh with Cilium.
func TestKeys(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{"base", layout.BasePrefix, "cilium"},
		{"state", layout.StatePrefix, "cilium/state"},
		{"cache", layout.CachePrefix, "cilium/cache"},
		{"heartbeat", layout.HeartbeatKey, "cilium/.heartbeat"},

		{"nodes", layout.NodesPrefix, "cilium/state/nodes/v1"},
		{"nodes of a cluster", layout.NodesClusterPrefix("c1"), "cilium/state/nodes/v1/c1"},
		{"node", layout.NodeKey("c1", "node-a"), "cilium/state/nodes/v1/c1/node-a"},

		{"ip", layout.IPPrefix, "cilium/state/ip/v1"},
		{"address space", layout.DefaultAddressSpace, "default"},
		{"ip default space", layout.IPDefaultPrefix, "cilium/state/ip/v1/default"},
		{"ip host entry", layout.IPKey("default", "10.0.1.5"), "cilium/state/ip/v1/default/10.0.1.5"},
		{"ip cidr entry", layout.IPKey("default", "10.0.0.0/24"), "cilium/state/ip/v1/default/10.0.0.0/24"},
		{"ip v6 entry", layout.IPKey("default", "fd00::1"), "cilium/state/ip/v1/default/fd00::1"},

		{"identities", layout.IdentitiesPrefix, "cilium/state/identities/v1"},
		{"allocator id dir", layout.AllocatorIDDir, "id"},
		{"allocator value dir", layout.AllocatorValueDir, "value"},
		{"allocator locks dir", layout.AllocatorLocksDir, "locks"},
		{"identity ids", layout.IdentitiesIDPrefix, "cilium/state/identities/v1/id"},
		{"identity values", layout.IdentitiesValuePrefix, "cilium/state/identities/v1/value"},
		{"identity locks", layout.IdentitiesLocksPrefix, "cilium/state/identities/v1/locks"},
		{"identity", layout.IdentityKey(65536), "cilium/state/identities/v1/id/65536"},
		{"identity reference", layout.IdentityValueKey("k8s:app=web;k8s:io.kubernetes.pod.namespace=default;", "10.0.0.1"),
			"cilium/state/identities/v1/value/k8s:app=web;k8s:io.kubernetes.pod.namespace=default;/10.0.0.1"},

		{"services", layout.ServicesPrefix, "cilium/state/services/v1"},
		{"services of a cluster", layout.ServicesClusterPrefix("c1"), "cilium/state/services/v1/c1"},
		{"service", layout.ServiceKey("c1", "default", "web"), "cilium/state/services/v1/c1/default/web"},

		{"cluster config prefix", layout.ClusterConfigPrefix, "cilium/cluster-config"},
		{"cluster config", layout.ClusterConfigKey("c1"), "cilium/cluster-config/c1"},

		{"synced", layout.SyncedPrefix, "cilium/synced"},
		{"synced of a cluster", layout.SyncedClusterPrefix("c1"), "cilium/synced/c1"},
		{"nodes canary", layout.SyncedKey("c1", layout.CanaryNodes), "cilium/synced/c1/cilium/state/nodes/v1"},
		{"ipcache canary", layout.SyncedKey("c1", layout.CanaryIPCache), "cilium/synced/c1/cilium/state/ip/v1"},
		{"identities canary", layout.SyncedKey("c1", layout.CanaryIdentities), "cilium/synced/c1/cilium/state/identities/v1"},
		{"services canary", layout.SyncedKey("c1", layout.CanaryServices), "cilium/synced/c1/cilium/state/services/v1"},

		{"cached nodes", layout.StateToCache(layout.NodesPrefix), "cilium/cache/nodes/v1"},
		{"cached ip", layout.StateToCache(layout.IPPrefix), "cilium/cache/ip/v1"},
		{"cached identities", layout.StateToCache(layout.IdentitiesPrefix), "cilium/cache/identities/v1"},
		{"cached services", layout.StateToCache(layout.ServicesPrefix), "cilium/cache/services/v1"},
		{"not state", layout.StateToCache(layout.ClusterConfigPrefix), "cilium/cluster-config"},

		{"publisher lock", layout.PublisherLockKey("c1"), "cilium/clustermesh-publisher/c1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.give != tt.want {
				t.Errorf("got %q, want %q", tt.give, tt.want)
			}
		})
	}
}
