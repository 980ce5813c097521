package models

// Monitor message types: the "type" of a MonitorMessage, and the values
// of GET /v1/monitor?type= (drop, policy-verdict, trace; drop and
// policy-verdict when absent).
const (
	MonitorTypeDrop          = "drop"
	MonitorTypePolicyVerdict = "policy-verdict"
	// MonitorTypeTrace is a forwarded packet (new flows, and more
	// with --monitor-aggregation none or low): asked for only.
	MonitorTypeTrace = "trace"
	// MonitorTypeLost says the subscriber fell behind and the agent
	// dropped Lost events for it (the datapath was not slowed down).
	MonitorTypeLost = "lost"
	// MonitorTypeSubscribed is the first line of every stream: events
	// the datapath reports from then on are delivered.
	MonitorTypeSubscribed = "subscribed"
)

// MonitorMessage is one line of GET /v1/monitor: the answer is a stream
// of JSON objects, one per line, flushed as the datapath reports them.
// Type is subscribed (the first line), drop, policy-verdict or lost; a
// lost line carries only Lost.
type MonitorMessage struct {
	Type string `json:"type"`
	// Lost is the number of events dropped for this subscriber since
	// the previous message (type lost only).
	Lost uint64 `json:"lost,omitempty"`
	// Event is the datapath event (types drop and policy-verdict).
	*MonitorEvent `json:",omitempty"`
}

// MonitorEvent is a drop or a policy verdict of the endpoint programs,
// with both identities and their labels.
type MonitorEvent struct {
	// Time is when the agent read the event (RFC 3339, nanoseconds).
	Time string `json:"time"`
	// Reason is the drop reason ("Policy denied"); for a verdict that
	// denies, the reason the packet is dropped with.
	Reason     string `json:"reason,omitempty"`
	ReasonCode uint8  `json:"reason-code,omitempty"`
	// Verdict is allow, deny, or audit: denied by policy but passed
	// (--policy-audit-mode) (policy-verdict); forwarded or audit (trace).
	Verdict string `json:"verdict,omitempty"`
	// State is the traced packet's conntrack state: new, established,
	// reply or related (trace only).
	State string `json:"state,omitempty"`
	// Match is what the verdict matched: L3-Only, L3-L4, L4-Only, all
	// or none (policy-verdict only).
	Match string `json:"match,omitempty"`
	// Direction is ingress or egress, seen from the endpoint.
	Direction string `json:"direction"`
	// EndpointID is the local endpoint whose program saw the packet.
	EndpointID uint16 `json:"endpoint-id"`
	// Source and Destination are the packet's ends.
	Source      MonitorPeer `json:"source"`
	Destination MonitorPeer `json:"destination"`
	// Protocol is TCP, UDP, SCTP, ICMP, ICMPv6 or the protocol number.
	Protocol string `json:"protocol"`
	// ICMPType is the ICMP or ICMPv6 type (ICMP protocols only).
	ICMPType *uint8 `json:"icmp-type,omitempty"`
	// TCPFlags are the packet's TCP flags ("SYN|ACK"; TCP only).
	TCPFlags string `json:"tcp-flags,omitempty"`
	// Length is the packet's length in bytes.
	Length uint32 `json:"length"`
}

// MonitorPeer is one end of a monitored packet.
type MonitorPeer struct {
	// Identity is the security identity and Labels its labels
	// ("source:key=value"; empty when the agent does not know it).
	Identity uint32   `json:"identity"`
	Labels   []string `json:"labels"`
	// IP and Port are the address and L4 port (0 without ports).
	IP   string `json:"ip,omitempty"`
	Port uint16 `json:"port,omitempty"`
}
