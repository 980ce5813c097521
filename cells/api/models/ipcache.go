package models

// IPCache is the body of GET /v1/ipcache: a page of the entries of the
// ipcache, sorted by prefix (address, then length), at a revision.
type IPCache struct {
	// Revision is the ipcache revision the entries are at.
	Revision uint64 `json:"revision"`
	// Entries are the entries (those within ?prefix= when given).
	Entries []IPCacheEntry `json:"entries"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}

// IPCacheEntry is one prefix of the ipcache, as served by GET /v1/ipcache
// and GET /v1/ipcache/{ip} (the longest prefix holding the IP).
type IPCacheEntry struct {
	// Prefix is the CIDR ("10.0.1.5/32", "10.0.0.0/8").
	Prefix string `json:"prefix"`
	// Identity is the numeric security identity.
	Identity uint32 `json:"identity"`
	// Reserved names a reserved identity ("host", "remote-node", ...).
	Reserved string `json:"reserved,omitempty"`
	// Source is the source that owns the entry ("local", "kvstore", ...).
	Source string `json:"source"`
	// TunnelPeer is the host IP of the node the prefix lives on.
	TunnelPeer string `json:"tunnel-peer,omitempty"`
	// EncryptKey is the index of the encryption key (0: none).
	EncryptKey uint8 `json:"encrypt-key,omitempty"`
	// K8sNamespace and K8sPodName name the pod behind the prefix.
	K8sNamespace string `json:"k8s-namespace,omitempty"`
	K8sPodName   string `json:"k8s-pod-name,omitempty"`
	// NamedPorts are the pod's named ports.
	NamedPorts []NamedPort `json:"named-ports,omitempty"`
}

// NamedPort is a named port of a pod or endpoint, the API's form of
// policyapi.NamedPort: the protocol is TCP, UDP or SCTP (in a request,
// any case, and TCP when empty).
type NamedPort struct {
	Name     string `json:"name"`
	Port     uint16 `json:"port"`
	Protocol string `json:"protocol,omitempty"`
}
