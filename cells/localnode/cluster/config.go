package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
)

// CiliumClusterConfig is what a cluster says about itself in its etcd, at
// kvstore/layout's ClusterConfigKey, in Cilium's JSON
// ({"id":2,"capabilities":{"syncedCanaries":true,...}}).
type CiliumClusterConfig struct {
	// ID is the cluster id.
	ID uint32 `json:"id"`
	// Capabilities say what the cluster's writers do.
	Capabilities CiliumClusterConfigCapabilities `json:"capabilities"`
}

// CiliumClusterConfigCapabilities are the capabilities of a cluster.
type CiliumClusterConfigCapabilities struct {
	// SyncedCanaries: the writers put a sync canary (kvstore/layout's
	// SyncedKey) once a prefix is complete, so readers wait for it
	// (sync-canary mode); without it readers start at once (immediate
	// mode).
	SyncedCanaries bool `json:"syncedCanaries,omitempty"`
	// MaxConnectedClusters is the mesh size the cluster was set up
	// with; 0 means Cilium's default, 255.
	MaxConnectedClusters uint32 `json:"maxConnectedClusters,omitempty"`
	// ServiceExportsEnabled: the cluster publishes service exports
	// (nil: it does not say).
	ServiceExportsEnabled *bool `json:"serviceExportsEnabled,omitempty"`
	// Cached: the data is served by a KVStoreMesh cache, under
	// cilium/cache/ rather than cilium/state/.
	Cached bool `json:"cached,omitempty"`
	// EndpointSlicesExportMode is Cilium's endpoint-slice export mode;
	// empty means services only.
	EndpointSlicesExportMode string `json:"endpointSlicesExportMode,omitempty"`
}

// CiliumClusterConfig returns the configuration this cluster publishes:
// its id, sync canaries and its mesh size.
func (c *Info) CiliumClusterConfig() CiliumClusterConfig {
	return CiliumClusterConfig{
		ID: c.ClusterID,
		Capabilities: CiliumClusterConfigCapabilities{
			SyncedCanaries:       true,
			MaxConnectedClusters: c.MaxConnectedClusters,
		},
	}
}

// MaxConnected returns the mesh size, with Cilium's default for 0.
func (c *CiliumClusterConfig) MaxConnected() uint32 {
	if c.Capabilities.MaxConnectedClusters == 0 {
		return MaxConnectedClusters255
	}
	return c.Capabilities.MaxConnectedClusters
}

// ParseClusterConfig decodes a cluster configuration read at key; errors
// name the key.
func ParseClusterConfig(key string, data []byte) (CiliumClusterConfig, error) {
	var c CiliumClusterConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return CiliumClusterConfig{}, fmt.Errorf("decode %s: %w", key, err)
	}
	return c, nil
}

// ValidateRemoteConfig checks the configuration a remote cluster name
// publishes as this cluster sees it: its id as ValidateRemote checks it
// and the same mesh size as this cluster's.
func (c *Info) ValidateRemoteConfig(name string, cfg CiliumClusterConfig) error {
	var errs []error
	if err := c.ValidateRemote(name, cfg.ID); err != nil {
		errs = append(errs, err)
	}
	if m := cfg.MaxConnected(); m != c.MaxConnectedClusters {
		errs = append(errs, fmt.Errorf("capabilities.maxConnectedClusters: %d differs from this cluster's --max-connected-clusters=%d", m, c.MaxConnectedClusters))
	}
	return errors.Join(errs...)
}

// Remote returns the Info of a remote cluster in this mesh.
func (c *Info) Remote(name string, id uint32) Info {
	return Info{ClusterName: name, ClusterID: id, MaxConnectedClusters: c.MaxConnectedClusters}
}
