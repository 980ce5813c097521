package models

// EndpointRequest is the body of PUT /v1/endpoint/{id}: the endpoint to
// create. Labels are "source:key=value" strings (no source: k8s); IPv4
// and IPv6, when set, are taken instead of addresses from the node's pod
// CIDRs. NamedPorts are the endpoint's named ports (a pod's container
// ports): policy rules on a port name resolve against them.
type EndpointRequest struct {
	NetNSPath     string              `json:"netns-path"`
	InterfaceName string              `json:"interface-name,omitempty"`
	Labels        []string            `json:"labels"`
	IPv4          string              `json:"ipv4,omitempty"`
	IPv6          string              `json:"ipv6,omitempty"`
	NamedPorts    []EndpointNamedPort `json:"named-ports,omitempty"`
	// K8sNamespace and K8sPodName name the endpoint's pod (the CNI
	// plugin sends them); with Kubernetes, the labels come from the pod.
	K8sNamespace string `json:"k8s-namespace,omitempty"`
	K8sPodName   string `json:"k8s-pod-name,omitempty"`
}

// EndpointNamedPort is a named port of an endpoint; the protocol is
// TCP, UDP or SCTP (TCP when empty).
type EndpointNamedPort struct {
	Name     string `json:"name"`
	Port     uint16 `json:"port"`
	Protocol string `json:"protocol,omitempty"`
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
	NamedPorts []EndpointNamedPort `json:"named-ports,omitempty"`
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
	// K8sNamespace and K8sPodName name the endpoint's pod, if any.
	K8sNamespace string `json:"k8s-namespace,omitempty"`
	K8sPodName   string `json:"k8s-pod-name,omitempty"`
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
