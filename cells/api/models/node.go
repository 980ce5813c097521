package models

// Node is one node as served by GET /v1/node (a list, sorted by cluster
// and name). Empty fields are left out.
type Node struct {
	// Name and Cluster identify the node; nodes of other clusters than
	// the local node's are shown as <cluster>/<name>.
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	// ClusterID is the id of the node's cluster.
	ClusterID uint32 `json:"cluster-id"`
	// Local is true for the node this agent runs on.
	Local bool `json:"local,omitempty"`
	// Source is where the node came from ("local", "kvstore", ...).
	Source string `json:"source"`
	// Addresses are the node's typed addresses.
	Addresses []NodeAddress `json:"addresses"`
	// PrimaryIPv4 and PrimaryIPv6 are the addresses other nodes use
	// (InternalIP first, then ExternalIP).
	PrimaryIPv4 string `json:"primary-ipv4,omitempty"`
	PrimaryIPv6 string `json:"primary-ipv6,omitempty"`
	// IPv4AllocCIDR and IPv6AllocCIDR are the pod CIDRs.
	IPv4AllocCIDR string `json:"ipv4-alloc-cidr,omitempty"`
	IPv6AllocCIDR string `json:"ipv6-alloc-cidr,omitempty"`
	// IPv4HealthIP and IPv6HealthIP are the health endpoint's addresses.
	IPv4HealthIP string `json:"ipv4-health-ip,omitempty"`
	IPv6HealthIP string `json:"ipv6-health-ip,omitempty"`
	// EncryptionKey is the index of the node's encryption key (0: none).
	EncryptionKey uint8             `json:"encryption-key,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// NodeAddress is one typed address of a node.
type NodeAddress struct {
	// Type is InternalIP, ExternalIP, CiliumInternalIP, ...
	Type string `json:"type"`
	IP   string `json:"ip"`
}
