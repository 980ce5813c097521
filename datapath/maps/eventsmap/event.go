package eventsmap

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// MapName is the ring buffer's name in the programs (and its pin name).
const MapName = "events"

// Type is an event's kind.
type Type uint8

// Event types (EVENT_* in bpf/lib/events.h).
const (
	TypeDrop          Type = 1
	TypePolicyVerdict Type = 2
	TypeTrace         Type = 3 // a forwarded packet (bpf/lib/trace.h)
)

// String returns "drop", "policy-verdict" or "trace".
func (t Type) String() string {
	switch t {
	case TypeDrop:
		return "drop"
	case TypePolicyVerdict:
		return "policy-verdict"
	case TypeTrace:
		return "trace"
	}
	return fmt.Sprintf("type-%d", uint8(t))
}

// Reason is why a packet was dropped (0: forwarded).
type Reason uint8

// Reasons (bpf/lib/events.h), numbered like Cilium's drop reasons.
const (
	ReasonForwarded    Reason = 0
	ReasonPolicy       Reason = 133
	ReasonInvalid      Reason = 134
	ReasonUnknownL3    Reason = 139
	ReasonPolicyDenied Reason = 181
	// ReasonEventsLost is not a packet's: the metrics map counts under it
	// the event records the ring buffer had no room for.
	ReasonEventsLost Reason = 255
	ReasonNoService  Reason = 158 // a service without an active backend (bpf/lib/lb.h)
	ReasonCsumFailed Reason = 153 // the service translation could not rewrite the packet
	// ReasonSourceRange: a frontend's loadBalancerSourceRanges do not
	// hold the client (bpf/netdev.c).
	ReasonSourceRange Reason = 177
	// ReasonNATNoMapping: NodePort's SNAT found no free source port, or
	// could not record the mapping (bpf/netdev.c).
	ReasonNATNoMapping Reason = 167
)

var reasonNames = map[Reason]string{
	ReasonForwarded:    "Forwarded",
	ReasonPolicy:       "Policy denied",
	ReasonInvalid:      "Invalid packet",
	ReasonUnknownL3:    "Unknown L3 protocol",
	ReasonPolicyDenied: "Policy denied by denylist",
	ReasonEventsLost:   "Events lost (ring buffer full)",
	ReasonNoService:    "Service backend not found",
	ReasonCsumFailed:   "Error while correcting L3/L4 checksum",
	ReasonSourceRange:  "Denied by LB src range check",
	ReasonNATNoMapping: "No mapping for NAT masquerade",
}

// String names the reason as Cilium's monitor does.
func (r Reason) String() string {
	if n, ok := reasonNames[r]; ok {
		return n
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// MatchType says which kind of policy entry decided a new flow.
type MatchType uint8

// Match types (MATCH_* in bpf/lib/events.h).
const (
	MatchNone   MatchType = 0
	MatchL3Only MatchType = 1
	MatchL3L4   MatchType = 2
	MatchL4Only MatchType = 3
	MatchAll    MatchType = 4
)

// String returns Cilium's spelling: "L3-Only", "L3-L4", "L4-Only", "all".
func (m MatchType) String() string {
	switch m {
	case MatchL3Only:
		return "L3-Only"
	case MatchL3L4:
		return "L3-L4"
	case MatchL4Only:
		return "L4-Only"
	case MatchAll:
		return "all"
	}
	return "none"
}

// CTState is a traced packet's conntrack state, numbered like Cilium's
// trace reasons (TRACE_REASON_*).
type CTState uint8

// Conntrack states of trace events (CT_* in bpf/lib/conntrack.h).
const (
	CTNew         CTState = 0 // the first packet of a flow, just allowed by policy
	CTEstablished CTState = 1
	CTReply       CTState = 2
	CTRelated     CTState = 3 // an ICMP error about a tracked flow
)

// String returns "new", "established", "reply" or "related".
func (s CTState) String() string {
	switch s {
	case CTNew:
		return "new"
	case CTEstablished:
		return "established"
	case CTReply:
		return "reply"
	case CTRelated:
		return "related"
	}
	return fmt.Sprintf("ct-state-%d", uint8(s))
}

// Record is struct event (bpf/lib/events.h), as read off the ring.
type Record struct {
	Type        uint8
	Reason      uint8
	Verdict     uint8
	MatchType   uint8
	Direction   uint8
	Family      uint8
	Proto       uint8
	ICMPType    uint8
	EndpointID  uint16
	Sport       uint16
	Dport       uint16
	TCPFlags    uint8
	Pad         uint8
	SrcIdentity uint32
	DstIdentity uint32
	Len         uint32
	Saddr       [16]byte
	Daddr       [16]byte
	RevNAT      uint16
	LBReply     uint8
	Pad2        uint8
}

// Verdicts of a policy-verdict record (VERDICT_* in bpf/lib/events.h).
const (
	verdictAllow = 1
	verdictAudit = 2
)

// RecordSize is the size of a record on the ring.
const RecordSize = 64

// Event is a decoded record.
type Event struct {
	Type    Type
	Reason  Reason  // drops; for verdicts, the reason a denied flow will be dropped with
	CTState CTState // traces: the packet's conntrack state
	Allowed bool    // policy verdicts
	// Audited: a policy verdict or a trace of a flow the policy denies
	// that --policy-audit-mode let through (Allowed is false).
	Audited     bool
	MatchType   MatchType
	Direction   policy.Direction
	EndpointID  uint16
	SrcIdentity identity.NumericIdentity
	DstIdentity identity.NumericIdentity
	Proto       policy.Proto
	ICMPType    uint8 // ICMP and ICMPv6
	TCPFlags    uint8 // TCP: the packet's flags (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, ...)
	Src, Dst    netip.AddrPort
	Len         uint32
	// RevNAT is the service (its rev-NAT index) of a translated packet,
	// 0 for none: the packet's destination, or, with ServiceIsSource,
	// its source (a reply of the service's flow, before its source is
	// rewritten back to the frontend).
	RevNAT          uint16
	ServiceIsSource bool
}

// recordSizeV1 is the size of the records of the programs before the
// rev-NAT fields: those an agent upgrade has not reloaded yet write it
// to the pinned ring for a moment.
const recordSizeV1 = 60

// Decode parses one ring buffer record: RecordSize bytes, or an earlier
// program's recordSizeV1 (with no service).
func Decode(b []byte) (Event, error) {
	if len(b) < RecordSize && len(b) != recordSizeV1 {
		return Event{}, fmt.Errorf("decode event: %d bytes, want %d", len(b), RecordSize)
	}
	var full [RecordSize]byte
	copy(full[:], b)
	var r Record
	if _, err := binary.Decode(full[:], binary.NativeEndian, &r); err != nil {
		return Event{}, fmt.Errorf("decode event: %w", err)
	}
	return r.Event()
}

// Event converts the record into an Event.
func (r Record) Event() (Event, error) {
	var src, dst netip.Addr
	switch r.Family {
	case 4:
		src, dst = netip.AddrFrom4([4]byte(r.Saddr[:4])), netip.AddrFrom4([4]byte(r.Daddr[:4]))
	case 6:
		src, dst = netip.AddrFrom16(r.Saddr), netip.AddrFrom16(r.Daddr)
	case 0: // not an IP packet (drops of unknown L3 or invalid frames)
	default:
		return Event{}, fmt.Errorf("decode event: family %d is neither 4 nor 6", r.Family)
	}
	reason, ct := Reason(r.Reason), CTState(0)
	if Type(r.Type) == TypeTrace { // a trace's reason field is its conntrack state
		reason, ct = ReasonForwarded, CTState(r.Reason)
	}
	return Event{
		Type:        Type(r.Type),
		Reason:      reason,
		CTState:     ct,
		Allowed:     r.Verdict == verdictAllow,
		Audited:     r.Verdict == verdictAudit,
		MatchType:   MatchType(r.MatchType),
		Direction:   policy.Direction(r.Direction),
		EndpointID:  r.EndpointID,
		SrcIdentity: identity.NumericIdentity(r.SrcIdentity),
		DstIdentity: identity.NumericIdentity(r.DstIdentity),
		Proto:       policy.Proto(r.Proto),
		ICMPType:    r.ICMPType,
		TCPFlags:    r.TCPFlags,
		Src:         netip.AddrPortFrom(src, be16(r.Sport)),
		Dst:         netip.AddrPortFrom(dst, be16(r.Dport)),
		Len:         r.Len,
		RevNAT:      r.RevNAT,

		ServiceIsSource: r.LBReply != 0,
	}, nil
}

// be16 converts a network-byte-order field to a host value.
func be16(v uint16) uint16 {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], v)
	return binary.BigEndian.Uint16(b[:])
}
