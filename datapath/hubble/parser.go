package hubble

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/policy"
)

// Cilium's monitor message types (CiliumEventType.type) and trace
// observation points (its sub_type for traces).
const (
	MessageTypeDrop          = 1
	MessageTypeTrace         = 4
	MessageTypePolicyVerdict = 5

	traceToEndpoint = 0 // TraceToLxc
	traceToStack    = 3
)

// Parser converts monitor events into flows.
type Parser struct {
	// NodeName is this node's name as Hubble shows it (with clustermesh,
	// "<cluster>/<node>").
	NodeName string
	// ClusterName is this cluster's name, for local pods whose labels
	// do not carry it.
	ClusterName string
	Endpoints   Endpoints
	Identities  Identities
	// Services, when set, names the services of the flows' ends
	// (source_service, destination_service): the frontends among their
	// addresses, and with RevNATs the service a translated packet went
	// through.
	Services Services
	RevNATs  RevNATs
}

// Decode converts ev into a flow.
func (p *Parser) Decode(ev monitor.Event) (*flow.Flow, error) {
	f := &flow.Flow{
		Time:     timestamppb.New(ev.Time),
		NodeName: p.NodeName,
		Type:     flow.FlowType_L3_L4,
	}
	// The programs run on the endpoint's veth: egress packets leave the
	// endpoint (source), ingress packets enter it (destination).
	connDir := ev.Direction
	switch ev.Type {
	case eventsmap.TypeDrop:
		f.Verdict = flow.Verdict_DROPPED
		f.DropReason = uint32(ev.Reason)
		f.DropReasonDesc = flow.DropReason(ev.Reason)
		f.EventType = &flow.CiliumEventType{Type: MessageTypeDrop, SubType: int32(ev.Reason)}
	case eventsmap.TypeTrace:
		f.Verdict = flow.Verdict_FORWARDED
		if ev.Audited { // the policy denies it; --policy-audit-mode let it through
			f.Verdict = flow.Verdict_AUDIT
		}
		point, sub := flow.TraceObservationPoint_TO_ENDPOINT, int32(traceToEndpoint)
		if ev.Direction == policy.Egress {
			point, sub = flow.TraceObservationPoint_TO_STACK, traceToStack
		}
		f.TraceObservationPoint = point
		f.EventType = &flow.CiliumEventType{Type: MessageTypeTrace, SubType: sub}
		f.TraceReason = flow.TraceReason(ev.CTState) + 1 // Hubble keeps 0 for unknown
		reply := ev.CTState == eventsmap.CTReply
		f.IsReply, f.Reply = wrapperspb.Bool(reply), reply
		if reply { // a reply travels against its connection
			connDir = 1 - connDir
		}
	case eventsmap.TypePolicyVerdict:
		f.Verdict = flow.Verdict_FORWARDED
		if !ev.Allowed {
			f.Verdict = flow.Verdict_DROPPED
			f.DropReason = uint32(ev.Reason)
			f.DropReasonDesc = flow.DropReason(ev.Reason)
		}
		f.PolicyMatchType = uint32(ev.MatchType)
		f.IsReply = wrapperspb.Bool(false)
		f.EventType = &flow.CiliumEventType{Type: MessageTypePolicyVerdict}
	default:
		return nil, fmt.Errorf("decode flow: event type %s has no flow", ev.Type)
	}
	f.TrafficDirection = flow.TrafficDirection_INGRESS
	if connDir == policy.Egress {
		f.TrafficDirection = flow.TrafficDirection_EGRESS
	}
	p.decodePacket(ev, f)
	f.Source = p.endpoint(ev.Src.Addr(), ev.SrcIdentity, ev.SrcLabels)
	f.Destination = p.endpoint(ev.Dst.Addr(), ev.DstIdentity, ev.DstLabels)
	f.SourceService, f.DestinationService = p.services(ev)
	return f, nil
}

// decodePacket fills the IP and L4 parts and the summary.
func (p *Parser) decodePacket(ev monitor.Event, f *flow.Flow) {
	src, dst := ev.Src.Addr(), ev.Dst.Addr()
	if !src.IsValid() {
		f.Summary = "not an IP packet"
		return
	}
	f.IP = &flow.IP{Source: src.String(), Destination: dst.String(), IpVersion: flow.IPVersion_IPv4}
	if src.Is6() && !src.Is4In6() {
		f.IP.IpVersion = flow.IPVersion_IPv6
	}
	sport, dport := uint32(ev.Src.Port()), uint32(ev.Dst.Port())
	switch ev.Proto {
	case policy.ProtoTCP:
		f.L4 = &flow.Layer4{Protocol: &flow.Layer4_TCP{TCP: &flow.TCP{SourcePort: sport, DestinationPort: dport, Flags: tcpFlags(ev.TCPFlags)}}}
		f.Summary = "TCP Flags: " + tcpFlagSummary(ev.TCPFlags)
	case policy.ProtoUDP:
		f.L4 = &flow.Layer4{Protocol: &flow.Layer4_UDP{UDP: &flow.UDP{SourcePort: sport, DestinationPort: dport}}}
		f.Summary = "UDP"
	case policy.ProtoSCTP:
		f.L4 = &flow.Layer4{Protocol: &flow.Layer4_SCTP{SCTP: &flow.SCTP{SourcePort: sport, DestinationPort: dport}}}
		f.Summary = "SCTP"
	case policy.ProtoICMP:
		f.L4 = &flow.Layer4{Protocol: &flow.Layer4_ICMPv4{ICMPv4: &flow.ICMPv4{Type: uint32(ev.ICMPType)}}}
		f.Summary = "ICMPv4 " + icmpv4Names.name(ev.ICMPType)
	case policy.ProtoICMPv6:
		f.L4 = &flow.Layer4{Protocol: &flow.Layer4_ICMPv6{ICMPv6: &flow.ICMPv6{Type: uint32(ev.ICMPType)}}}
		f.Summary = "ICMPv6 " + icmpv6Names.name(ev.ICMPType)
	default:
		f.Summary = monitor.ProtoName(ev.Proto)
	}
}

// tcpFlags converts byte 13 of the TCP header.
func tcpFlags(b uint8) *flow.TCPFlags {
	return &flow.TCPFlags{
		FIN: b&0x01 != 0, SYN: b&0x02 != 0, RST: b&0x04 != 0, PSH: b&0x08 != 0,
		ACK: b&0x10 != 0, URG: b&0x20 != 0, ECE: b&0x40 != 0, CWR: b&0x80 != 0,
	}
}

// tcpFlagSummary names the flags as Hubble's summary does: "SYN, ACK".
func tcpFlagSummary(b uint8) string {
	names := []string{"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"}
	order := []int{1, 4, 2, 0, 3, 5, 6, 7} // SYN, ACK, RST, FIN, PSH, URG, ECE, CWR
	var out []string
	for _, i := range order {
		if b&(1<<i) != 0 {
			out = append(out, names[i])
		}
	}
	return strings.Join(out, ", ")
}

// icmpNames names ICMP types as gopacket (and so Hubble's summary) does.
type icmpNames map[uint8]string

func (n icmpNames) name(t uint8) string {
	if s, ok := n[t]; ok {
		return s
	}
	return fmt.Sprintf("%d(0)", t)
}

var icmpv4Names = icmpNames{0: "EchoReply", 3: "DestinationUnreachable", 5: "Redirect", 8: "EchoRequest", 11: "TimeExceeded", 12: "ParameterProblem"}

var icmpv6Names = icmpNames{1: "DestinationUnreachable", 2: "PacketTooBig", 3: "TimeExceeded", 4: "ParameterProblem",
	128: "EchoRequest", 129: "EchoReply", 133: "RouterSolicitation", 134: "RouterAdvertisement", 135: "NeighborSolicitation", 136: "NeighborAdvertisement"}
