package models

// BPFIPCacheList is the body of GET /v1/bpf/ipcache: a page of the
// entries of the BPF ipcache map, sorted by prefix.
type BPFIPCacheList struct {
	Items []BPFIPCacheEntry `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}

// BPFIPCacheEntry is one prefix of the BPF ipcache map.
type BPFIPCacheEntry struct {
	Prefix   string `json:"prefix"`
	Identity uint32 `json:"identity"`
	// TunnelPeer is the host IP of the node the prefix lives on.
	TunnelPeer string `json:"tunnel-peer,omitempty"`
	// EncryptKey is the index of the encryption key (0: none).
	EncryptKey uint8 `json:"encrypt-key"`
}

// BPFPolicy is the body of GET /v1/bpf/policy/{endpoint-id}: the
// entries of an endpoint's BPF policy map, ingress first, then by
// identity, protocol and port.
type BPFPolicy struct {
	EndpointID uint16           `json:"endpoint-id"`
	Entries    []BPFPolicyEntry `json:"entries"`
}

// BPFPolicyEntry is one key of a policy map with its verdict and
// counters.
type BPFPolicyEntry struct {
	// Policy is Allow or Deny.
	Policy string `json:"policy"`
	// Direction is Ingress or Egress.
	Direction string `json:"direction"`
	// Identity is the peer identity (0: any peer) and Labels its labels
	// ("reserved:unknown" for 0 is not given: Labels is empty).
	Identity uint32   `json:"identity"`
	Labels   []string `json:"labels"`
	// Protocol is TCP, UDP, SCTP, ICMP, ICMPv6, the protocol number, or
	// ANY.
	Protocol string `json:"protocol"`
	// Port is the first port of the entry and PortPrefixLen the number
	// of leading bits of Port that match (16: one port; 0: every port).
	// For ICMP the port is the ICMP type.
	Port          uint16 `json:"port"`
	PortPrefixLen uint8  `json:"port-prefix-len"`
	// PortRange is the ports the entry covers, as the CLI prints them:
	// "80/TCP", "8080-8087/TCP", "ANY", "8/ICMP" (echo request).
	PortRange string `json:"port-range"`
	Bytes     uint64 `json:"bytes"`
	Packets   uint64 `json:"packets"`
}

// BPFCTList is the body of GET /v1/bpf/ct: a page of the connection
// tracking entries (IPv4 then IPv6), sorted by tuple.
type BPFCTList struct {
	Items []BPFCTEntry `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}

// BPFCTEntry is one tracked flow.
type BPFCTEntry struct {
	// Protocol is TCP, UDP, SCTP, ICMP, ICMPv6 or the protocol number.
	Protocol    string `json:"protocol"`
	Source      string `json:"source"`
	Destination string `json:"destination"`
	// Direction is ingress or egress, seen from the endpoint, or
	// service: the entry remembering the backend of a flow to a service
	// frontend (source -> frontend), or nodeport: a flow from outside
	// translated by the NodePort programs (client -> backend).
	Direction  string `json:"direction"`
	EndpointID uint16 `json:"endpoint-id"`
	// BackendID is the backend of a service entry; RevNATIndex the
	// service whose frontend a translated flow's replies come from.
	BackendID   uint32 `json:"backend-id,omitempty"`
	RevNATIndex uint16 `json:"rev-nat-index,omitempty"`
	// PeerIdentity is the identity of the endpoint's peer.
	PeerIdentity uint32 `json:"peer-identity"`
	// ExpiresInSeconds is how long the entry lives without traffic
	// (negative: expired, waiting for the garbage collector).
	ExpiresInSeconds int64 `json:"expires-in-seconds"`
	// TCPFlags are the TCP flags seen on the flow ("SYN|ACK").
	TCPFlags string `json:"tcp-flags,omitempty"`
	// Flags are the entry's flags ("closing").
	Flags []string `json:"flags,omitempty"`
	// PolicyRevision is the endpoint's policy revision the flow was
	// last allowed under.
	PolicyRevision uint32 `json:"policy-revision"`
	// TxPackets and TxBytes count the flow's opening direction,
	// RxPackets and RxBytes its replies.
	TxPackets uint64 `json:"tx-packets"`
	TxBytes   uint64 `json:"tx-bytes"`
	RxPackets uint64 `json:"rx-packets"`
	RxBytes   uint64 `json:"rx-bytes"`
}

// BPFMetrics is the body of GET /v1/bpf/metrics: the datapath's
// packet counters by reason and direction, summed over CPUs.
type BPFMetrics struct {
	Items []BPFMetric `json:"items"`
}

// BPFMetric is one counter of the metrics map.
type BPFMetric struct {
	Reason     string `json:"reason"`
	ReasonCode uint8  `json:"reason-code"`
	Direction  string `json:"direction"`
	Packets    uint64 `json:"packets"`
	Bytes      uint64 `json:"bytes"`
}

// BPFLBList is the body of GET /v1/bpf/lb: a page of the frontends of
// the BPF load-balancing maps, sorted by family, address, port and
// protocol.
type BPFLBList struct {
	Items []BPFLBService `json:"items"`
	// Continue, when not empty, asks for the next page.
	Continue string `json:"continue,omitempty"`
}

// BPFLBService is one frontend of the BPF service maps.
type BPFLBService struct {
	// Frontend is address:port/protocol ("10.96.0.10:53/UDP").
	Frontend string `json:"frontend"`
	// RevNATIndex is the service id (the reverse-NAT entry).
	RevNATIndex uint16 `json:"rev-nat-index"`
	// Flags are Cilium's: the type (ClusterIP, NodePort, ExternalIPs,
	// LoadBalancer), then Local, sessionAffinity, sourceRange,
	// two-scopes, non-routable. An internal-scope frontend ends in /i.
	Flags []string `json:"flags"`
	// AffinityTimeoutSeconds is the ClientIP session affinity timeout
	// (0: none).
	AffinityTimeoutSeconds uint32 `json:"affinity-timeout-seconds,omitempty"`
	// Count is the number of active backends (slots 1..count).
	Count uint16 `json:"count"`
	// NoMaster is true for slots without a master entry (a write in
	// progress or left behind).
	NoMaster bool `json:"no-master,omitempty"`
	// Backends are the backend slots, in slot order.
	Backends []BPFLBBackend `json:"backends"`
	// SourceRanges are the only clients from outside the frontend
	// admits (loadBalancerSourceRanges; flag sourceRange).
	SourceRanges []string `json:"source-ranges,omitempty"`
}

// BPFLBBackend is one backend slot of a frontend.
type BPFLBBackend struct {
	Slot      uint16 `json:"slot"`
	BackendID uint32 `json:"backend-id"`
	// Address is address:port/protocol; empty when the backend entry is
	// missing.
	Address string `json:"address,omitempty"`
	// State is active, terminating or quarantined.
	State     string `json:"state,omitempty"`
	ClusterID uint32 `json:"cluster-id,omitempty"`
}
