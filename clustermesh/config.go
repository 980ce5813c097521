package clustermesh

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Config configures the mesh. --cluster-name, --cluster-id and
// --max-connected-clusters are the local-node cell's (types.ClusterInfo).
type Config struct {
	// ClusterMeshConfig is the directory of remote cluster configs, one
	// file per cluster named after it; empty: no mesh.
	ClusterMeshConfig string
	// ClusterMeshSyncTimeout bounds how long the first endpoint
	// regeneration waits for the remotes to be ready.
	ClusterMeshSyncTimeout time.Duration
}

// DefaultConfig is Cilium's default.
var DefaultConfig = Config{ClusterMeshSyncTimeout: time.Minute}

// Flags registers --clustermesh-config and --clustermesh-sync-timeout.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("clustermesh-config", def.ClusterMeshConfig,
		"Directory of remote cluster configs (one etcd config file per cluster, named after it); empty disables ClusterMesh")
	fs.Duration("clustermesh-sync-timeout", def.ClusterMeshSyncTimeout,
		"How long the first endpoint regeneration waits for every remote cluster to be synced")
}

// Validate rejects a non-positive timeout.
func (c *Config) Validate() error {
	if c.ClusterMeshSyncTimeout <= 0 {
		return fmt.Errorf("--clustermesh-sync-timeout: must be positive, got %s", c.ClusterMeshSyncTimeout)
	}
	return nil
}
