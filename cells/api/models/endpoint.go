package models

// EndpointRequest is the body of PUT /v1/endpoint/{id}: the endpoint to
// create. Labels are "source:key=value" strings (no source: k8s); IPv4
// and IPv6, when set, are taken instead of addresses from the node's pod
// CIDRs. NamedPorts are the endpoint's named ports (a pod's container
// ports): policy rules on a port name resolve against them.
// ContainerID, PodNamespace and PodName are optional and stored with the
// endpoint: the CNI plugin sets the container id (and the pod's
// namespace and name in Kubernetes) so that it finds the endpoint again.
type EndpointRequest struct {
	NetNSPath     string      `json:"netns-path"`
	InterfaceName string      `json:"interface-name,omitempty"`
	Labels        []string    `json:"labels"`
	IPv4          string      `json:"ipv4,omitempty"`
	IPv6          string      `json:"ipv6,omitempty"`
	NamedPorts    []NamedPort `json:"named-ports,omitempty"`
	ContainerID   string      `json:"container-id,omitempty"`
	PodNamespace  string      `json:"pod-namespace,omitempty"`
	PodName       string      `json:"pod-name,omitempty"`
}

// Endpoint is one endpoint of the node, as served by GET
// /v1/endpoint[/{id}] and answered by PUT.
type Endpoint struct {
	ID            uint16   `json:"id"`
	NetNSPath     string   `json:"netns-path"`
	InterfaceName string   `json:"interface-name"`
	Labels        []string `json:"labels"`
	IPv4          string   `json:"ipv4,omitempty"`
	IPv6          string   `json:"ipv6,omitempty"`
	// NamedPorts are the endpoint's named ports.
	NamedPorts []NamedPort `json:"named-ports,omitempty"`
	// ContainerID, PodNamespace and PodName are those of the request.
	ContainerID  string `json:"container-id,omitempty"`
	PodNamespace string `json:"pod-namespace,omitempty"`
	PodName      string `json:"pod-name,omitempty"`
	// Identity is the security identity (0 while waiting for it).
	Identity uint32 `json:"identity"`
	// State is waiting-for-identity, regenerating, ready, not-ready
	// (the last regeneration failed: see Error) or disconnecting.
	State string `json:"state"`
	// Error says why the last regeneration (or deletion) failed.
	Error string `json:"error,omitempty"`
	// Policy is the endpoint's policy in the datapath.
	Policy EndpointPolicy `json:"policy"`
	// HostInterface, HostIfIndex and HostMAC are the host side of the
	// veth; ContainerMAC is the endpoint's interface's.
	HostInterface string `json:"host-interface,omitempty"`
	HostIfIndex   int    `json:"host-ifindex,omitempty"`
	HostMAC       string `json:"host-mac,omitempty"`
	ContainerMAC  string `json:"container-mac,omitempty"`
	// Created is when the endpoint was created or restored (RFC 3339).
	Created string `json:"created"`
}

// EndpointPolicy is the policy state of an endpoint.
type EndpointPolicy struct {
	// IngressEnforcement and EgressEnforcement: a rule selects the
	// endpoint in that direction, so traffic not allowed is dropped.
	IngressEnforcement bool `json:"ingress-enforcement"`
	EgressEnforcement  bool `json:"egress-enforcement"`
	// Revision is the policy repository revision in the datapath.
	Revision uint64 `json:"revision"`
	// MapKeys is the number of keys of the endpoint's map state.
	MapKeys int `json:"map-keys"`
}

// EndpointList is the body of GET /v1/endpoint: endpoints sorted by id.
type EndpointList struct {
	Items []Endpoint `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}
