package hubble

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
)

// Metric names Hubble's flow metrics (--hubble-metrics).
type Metric string

// The metrics apiary exports, with Cilium's names and labels.
const (
	// MetricFlow: hubble_flows_processed_total{protocol,type,subtype,verdict}.
	MetricFlow Metric = "flow"
	// MetricDrop: hubble_drop_total{reason,protocol}.
	MetricDrop Metric = "drop"
	// MetricTCP: hubble_tcp_flags_total{flag,family}.
	MetricTCP Metric = "tcp"
	// MetricPolicy: hubble_policy_verdicts_total{direction,match,action},
	// of the policy-verdict flows (enabling it makes the programs write
	// a verdict event for every new flow).
	MetricPolicy Metric = "policy"
)

// FlowMetrics counts flows into Hubble's metrics.
type FlowMetrics struct {
	flows, drops, tcp, policy *prometheus.CounterVec
}

// NewFlowMetrics creates the selected metrics and registers them with reg.
func NewFlowMetrics(reg prometheus.Registerer, enabled []Metric) (*FlowMetrics, error) {
	m := &FlowMetrics{}
	for _, e := range enabled {
		var c **prometheus.CounterVec
		var opts prometheus.CounterOpts
		var labels []string
		switch e {
		case MetricFlow:
			c, labels = &m.flows, []string{"protocol", "type", "subtype", "verdict"}
			opts = prometheus.CounterOpts{Namespace: "hubble", Name: "flows_processed_total", Help: "Total number of flows processed"}
		case MetricDrop:
			c, labels = &m.drops, []string{"reason", "protocol"}
			opts = prometheus.CounterOpts{Namespace: "hubble", Name: "drop_total", Help: "Number of drops"}
		case MetricTCP:
			c, labels = &m.tcp, []string{"flag", "family"}
			opts = prometheus.CounterOpts{Namespace: "hubble", Name: "tcp_flags_total", Help: "TCP flag occurrences"}
		case MetricPolicy:
			c, labels = &m.policy, []string{"direction", "match", "action"}
			opts = prometheus.CounterOpts{Namespace: "hubble", Name: "policy_verdicts_total", Help: "Total number of Cilium network policy verdicts"}
		default:
			return nil, fmt.Errorf("metric %q is not flow, drop, tcp or policy", e)
		}
		if *c != nil {
			return nil, fmt.Errorf("metric %q listed twice", e)
		}
		*c = prometheus.NewCounterVec(opts, labels)
		if err := reg.Register(*c); err != nil {
			return nil, fmt.Errorf("register hubble metric %s: %w", e, err)
		}
	}
	return m, nil
}

// traceSubtypes are Cilium's names of the trace observation points.
var traceSubtypes = map[int32]string{0: "to-endpoint", 1: "to-proxy", 2: "to-host", 3: "to-stack", 4: "to-overlay", 5: "from-endpoint"}

// Observe counts f.
func (m *FlowMetrics) Observe(f *flow.Flow) {
	proto := FlowProtocol(f)
	if m.flows != nil {
		typ, sub := "Unknown", ""
		switch f.GetEventType().GetType() {
		case MessageTypeDrop:
			typ = "Drop"
		case MessageTypeTrace:
			typ, sub = "Trace", traceSubtypes[f.GetEventType().GetSubType()]
		case MessageTypePolicyVerdict:
			typ = "PolicyVerdict"
		}
		m.flows.WithLabelValues(proto, typ, sub, f.GetVerdict().String()).Inc()
	}
	if m.drops != nil && f.GetVerdict() == flow.Verdict_DROPPED {
		m.drops.WithLabelValues(f.GetDropReasonDesc().String(), proto).Inc()
	}
	if m.policy != nil && f.GetEventType().GetType() == MessageTypePolicyVerdict && f.GetSource().GetIdentity() != reservedHost {
		m.policy.WithLabelValues(strings.ToLower(f.GetTrafficDirection().String()),
			strings.ToLower(policyMatchNames[f.GetPolicyMatchType()]), strings.ToLower(f.GetVerdict().String())).Inc()
	}
	if tcp := f.GetL4().GetTCP(); m.tcp != nil && tcp != nil && f.GetIP() != nil {
		fam := f.GetIP().GetIpVersion().String()
		fl := tcp.GetFlags()
		if fl.GetFIN() {
			m.tcp.WithLabelValues("FIN", fam).Inc()
		}
		if fl.GetSYN() && fl.GetACK() {
			m.tcp.WithLabelValues("SYN-ACK", fam).Inc()
		} else if fl.GetSYN() {
			m.tcp.WithLabelValues("SYN", fam).Inc()
		}
		if fl.GetRST() {
			m.tcp.WithLabelValues("RST", fam).Inc()
		}
	}
}

// reservedHost is the host's identity: Hubble's policy metric skips its
// verdicts (the host may reach every local endpoint).
const reservedHost = 1

// policyMatchNames are Cilium's names of the policy match types.
var policyMatchNames = map[uint32]string{0: "none", 1: "L3-Only", 2: "L3-L4", 3: "L4-Only", 4: "all"}

// FlowProtocol names a flow's L4 protocol as Hubble's metrics do.
func FlowProtocol(f *flow.Flow) string {
	l4 := f.GetL4()
	switch {
	case l4.GetTCP() != nil:
		return "TCP"
	case l4.GetUDP() != nil:
		return "UDP"
	case l4.GetICMPv4() != nil:
		return "ICMPv4"
	case l4.GetICMPv6() != nil:
		return "ICMPv6"
	case l4.GetSCTP() != nil:
		return "SCTP"
	}
	return "Unknown flow"
}
