package models

import "time"

// ClusterMesh is the state of the mesh as served by GET /v1/cluster/mesh
// (`apiary clustermesh status`).
type ClusterMesh struct {
	// LocalCluster is this cluster's name, LocalClusterID its id.
	LocalCluster   string `json:"local-cluster"`
	LocalClusterID uint32 `json:"local-cluster-id"`
	// ConfigDir is --clustermesh-config.
	ConfigDir string `json:"config-dir"`
	// Clusters are the remote clusters, sorted by name.
	Clusters []RemoteCluster `json:"clusters"`
	// GlobalServices is the number of global services the remotes
	// share (namespace/names).
	GlobalServices int `json:"global-services"`
	// Invalid are the files of the config directory that were refused.
	Invalid []InvalidClusterConfig `json:"invalid,omitempty"`
}

// InvalidClusterConfig is a file of the config directory that was refused.
type InvalidClusterConfig struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// RemoteCluster is the state of one remote cluster connection.
type RemoteCluster struct {
	Name string `json:"name"`
	// Connected: the etcd connection is up and the cluster config valid.
	Connected bool `json:"connected"`
	// Ready: every prefix has been listed once.
	Ready bool `json:"ready"`
	// Status says precisely what the connection is doing or waits for
	// ("ready", "dial: ...", "cluster config: ...", "waiting for sync
	// canary of <name>", a canary name of kvstore/layout).
	Status string `json:"status"`
	// Etcd is the etcd client's status line.
	Etcd string `json:"etcd,omitempty"`
	// ConfigFile is the file the connection is configured by.
	ConfigFile string `json:"config-file"`
	// Config is what the remote says about itself.
	Config RemoteClusterConfig `json:"config"`
	// Prefixes are the watched prefixes.
	Prefixes []RemotePrefix `json:"prefixes"`
	// Nodes, Identities, Endpoints and Services count the entries learned.
	Nodes      int `json:"nodes"`
	Identities int `json:"identities"`
	Endpoints  int `json:"endpoints"`
	Services   int `json:"services"`
	// Failures counts failed connection attempts; LastFailure and
	// LastError are the latest.
	Failures    int        `json:"failures"`
	LastFailure *time.Time `json:"last-failure,omitempty"`
	LastError   string     `json:"last-error,omitempty"`
}

// RemoteClusterConfig is the remote's cluster configuration, at
// kvstore/layout's ClusterConfigKey(name).
type RemoteClusterConfig struct {
	Required              bool   `json:"required"`
	Found                 bool   `json:"found"`
	ClusterID             uint32 `json:"cluster-id,omitempty"`
	SyncedCanaries        bool   `json:"synced-canaries"`
	MaxConnectedClusters  uint32 `json:"max-connected-clusters,omitempty"`
	ServiceExportsEnabled *bool  `json:"service-exports-enabled,omitempty"`
	Cached                bool   `json:"cached,omitempty"`
}

// RemotePrefix is one watched prefix of a remote cluster.
type RemotePrefix struct {
	Prefix string `json:"prefix"`
	// Canary is the sync canary waited for (empty in immediate mode).
	Canary    string `json:"canary,omitempty"`
	Synced    bool   `json:"synced"`
	Entries   int    `json:"entries"`
	Malformed int    `json:"malformed"`
	Refused   int    `json:"refused"`
	// LastSkipped is the last skipped key and why.
	LastSkipped string `json:"last-skipped,omitempty"`
}
