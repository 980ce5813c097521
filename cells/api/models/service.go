package models

// GlobalService is a ClusterMesh global service: the backends every
// remote cluster shares for namespace/name.
type GlobalService struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Clusters are the sharing clusters, sorted by name.
	Clusters []ServiceCluster `json:"clusters"`
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

// GlobalServiceList is the body of GET /v1/service: global services
// sorted by namespace/name.
type GlobalServiceList struct {
	Items []GlobalService `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}
