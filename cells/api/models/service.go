package models

// GlobalService is one service of GET /v1/service: the load-balancing
// frontends the service manager computed for namespace/name (when the
// agent runs one) and, for a ClusterMesh global service, the part every
// sharing cluster publishes.
type GlobalService struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Clusters are the sharing clusters, sorted by name (empty for a
	// service that is not global).
	Clusters []ServiceCluster `json:"clusters"`
	// Frontends are the service's frontends with the backends they
	// balance to, sorted by address (Cilium's `cilium service list`).
	Frontends []ServiceFrontend `json:"frontends,omitempty"`
}

// ServiceCluster is one cluster's part of a global service.
type ServiceCluster struct {
	Cluster   string `json:"cluster"`
	ClusterID uint32 `json:"cluster-id"`
	// Frontends and Backends are "<ip>:<port>/<protocol>" (with
	// " (<port name>)" when the port is named), sorted.
	Frontends []string `json:"frontends"`
	Backends  []string `json:"backends"`
}

// ServiceFrontend is one load-balancing frontend.
type ServiceFrontend struct {
	// ID is the service manager's number for the frontend, stable while
	// it exists.
	ID uint32 `json:"id"`
	// Address is "<ip>:<port>/<protocol>".
	Address string `json:"address"`
	// Type is ClusterIP, NodePort, ExternalIPs or LoadBalancer.
	Type string `json:"type"`
	// LocalOnly is set when a traffic policy Local keeps the node's
	// backends only.
	LocalOnly bool `json:"local-only,omitempty"`
	// SessionAffinityTimeout is ClientIP affinity's timeout in seconds
	// (0: none).
	SessionAffinityTimeout int64            `json:"session-affinity-timeout,omitempty"`
	Backends               []ServiceBackend `json:"backends"`
}

// ServiceBackend is one backend of a frontend.
type ServiceBackend struct {
	// Address is "<ip>:<port>/<protocol>".
	Address string `json:"address"`
	// State is active, terminating or quarantined.
	State string `json:"state"`
	// Cluster and ClusterID are the backend's cluster.
	Cluster   string `json:"cluster,omitempty"`
	ClusterID uint32 `json:"cluster-id"`
	NodeName  string `json:"node-name,omitempty"`
}

// GlobalServiceList is the body of GET /v1/service: services sorted by
// namespace/name.
type GlobalServiceList struct {
	Items []GlobalService `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}
