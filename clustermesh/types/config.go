package types

// CiliumClusterConfig is the JSON value of cilium/cluster-config/<cluster>
// as Cilium v1.20 writes and reads it: what a cluster tells the clusters
// that mesh with it. Every field is omitted when zero, as in Cilium.
type CiliumClusterConfig struct {
	// ID is the cluster id (--cluster-id).
	ID uint32 `json:"id,omitempty"`
	// Capabilities says what the cluster publishes.
	Capabilities CiliumClusterConfigCapabilities `json:"capabilities,omitempty"`
}

// CiliumClusterConfigCapabilities are the capabilities of a cluster in
// its CiliumClusterConfig.
type CiliumClusterConfigCapabilities struct {
	// SyncedCanaries: the cluster writes a sync canary
	// cilium/synced/<cluster>/<kind> for each kind of data once it is
	// complete, and readers wait for it.
	SyncedCanaries bool `json:"syncedCanaries,omitempty"`
	// Cached: the data is a copy kept by KVStoreMesh under cilium/cache/.
	Cached bool `json:"cached,omitempty"`
	// MaxConnectedClusters is the cluster's --max-connected-clusters.
	MaxConnectedClusters uint32 `json:"maxConnectedClusters,omitempty"`
	// ServiceExportsEnabled says whether the cluster exports MCS-API
	// ServiceExports; nil means it does not support them (apiary's
	// case), and readers then do not wait for their canary.
	ServiceExportsEnabled *bool `json:"serviceExportsEnabled,omitempty"`
	// EndpointSlicesExportMode is Cilium's endpoint-slice export mode;
	// empty means services only.
	EndpointSlicesExportMode string `json:"endpointSlicesExportMode,omitempty"`
}

// CiliumClusterConfig returns the configuration this cluster publishes:
// its id, sync canaries and its mesh size.
func (c *ClusterInfo) CiliumClusterConfig() CiliumClusterConfig {
	return CiliumClusterConfig{
		ID: c.ClusterID,
		Capabilities: CiliumClusterConfigCapabilities{
			SyncedCanaries:       true,
			MaxConnectedClusters: c.MaxConnectedClusters,
		},
	}
}
