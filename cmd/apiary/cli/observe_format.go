package cli

import (
	"fmt"
	"net"
	"path"
	"strconv"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
)

// compactTimeFormat is hubble's default (time.StampMilli).
const compactTimeFormat = "Jan _2 15:04:05.000"

// CompactFlow formats a flow as `hubble observe` does by default:
// "Jan  2 15:04:05.000: ns/pod:port (ID:n) -> ns/pod:port (ID:n) type VERDICT (summary)".
func CompactFlow(f *flow.Flow) string {
	src, dst := flowHost(f, f.GetSource(), f.GetIP().GetSource(), true), flowHost(f, f.GetDestination(), f.GetIP().GetDestination(), false)
	srcID, dstID := fmtIdentity(f.GetSource().GetIdentity()), fmtIdentity(f.GetDestination().GetIdentity())
	arrow := "->"
	switch {
	case f.GetIsReply() == nil:
		arrow = "<>"
	case f.GetIsReply().GetValue():
		src, dst, srcID, dstID, arrow = dst, src, dstID, srcID, "<-"
	}
	ts := "N/A"
	if f.GetTime().IsValid() {
		ts = f.GetTime().AsTime().Format(compactTimeFormat)
	}
	return fmt.Sprintf("%s: %s %s %s %s %s %s %s (%s)", ts, src, srcID, arrow, dst, dstID, flowType(f), flowVerdict(f), f.GetSummary())
}

func flowHost(f *flow.Flow, ep *flow.Endpoint, ip string, source bool) string {
	host := ip
	if ep.GetPodName() != "" {
		host = path.Join(ep.GetNamespace(), ep.GetPodName())
	}
	var port uint32
	l4 := f.GetL4()
	switch {
	case l4.GetTCP() != nil:
		port = pick(source, l4.GetTCP().GetSourcePort(), l4.GetTCP().GetDestinationPort())
	case l4.GetUDP() != nil:
		port = pick(source, l4.GetUDP().GetSourcePort(), l4.GetUDP().GetDestinationPort())
	case l4.GetSCTP() != nil:
		port = pick(source, l4.GetSCTP().GetSourcePort(), l4.GetSCTP().GetDestinationPort())
	}
	if port == 0 {
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

func pick(source bool, s, d uint32) uint32 {
	if source {
		return s
	}
	return d
}

// reservedIdentities are Cilium's reserved identities by number.
var reservedIdentities = map[uint32]string{1: "host", 2: "world", 3: "unmanaged", 4: "health", 5: "init",
	6: "remote-node", 7: "kube-apiserver", 8: "ingress", 9: "world-ipv4", 10: "world-ipv6"}

func fmtIdentity(id uint32) string {
	if n, ok := reservedIdentities[id]; ok {
		return "(" + n + ")"
	}
	return fmt.Sprintf("(ID:%d)", id)
}

// traceObservationPoints name Cilium's trace sub types.
var traceObservationPoints = map[int32]string{0: "to-endpoint", 1: "to-proxy", 2: "to-host", 3: "to-stack",
	4: "to-overlay", 5: "from-endpoint", 6: "from-proxy", 7: "from-host", 8: "from-stack", 9: "from-overlay", 10: "from-network"}

// dropReasonNames are Cilium's monitor descriptions of the drop reasons
// apiary's programs report.
var dropReasonNames = map[int32]string{133: "Policy denied", 134: "Invalid packet", 139: "Unsupported L3 protocol", 181: "Policy denied by denylist"}

// policyMatchNames are Cilium's names of the policy match types.
var policyMatchNames = map[uint32]string{0: "none", 1: "L3-Only", 2: "L3-L4", 3: "L4-Only", 4: "all"}

func flowType(f *flow.Flow) string {
	sub := f.GetEventType().GetSubType()
	switch f.GetEventType().GetType() {
	case 4: // trace
		if n, ok := traceObservationPoints[sub]; ok {
			return n
		}
		return fmt.Sprintf("%d", sub)
	case 1: // drop
		if n, ok := dropReasonNames[sub]; ok {
			return n
		}
		return fmt.Sprintf("%d", sub)
	case 5: // policy verdict
		return fmt.Sprintf("policy-verdict:%s %s", policyMatchNames[f.GetPolicyMatchType()], f.GetTrafficDirection())
	}
	return "UNKNOWN"
}

func flowVerdict(f *flow.Flow) string {
	v := f.GetVerdict()
	if f.GetEventType().GetType() == 5 {
		switch v {
		case flow.Verdict_FORWARDED, flow.Verdict_REDIRECTED:
			return "ALLOWED"
		case flow.Verdict_DROPPED, flow.Verdict_ERROR:
			return "DENIED"
		}
	}
	return v.String()
}
