package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
)

// flowFilterFlags are hubble observe's filter flags. from-/to- flags
// filter one end; the flags without a prefix match either end (two
// filters: every such flag on the source, or every one on the
// destination).
type flowFilterFlags struct {
	fromPod, toPod, pod             []string
	fromSvc, toSvc, svc             []string
	fromNS, toNS, ns                []string
	fromLabel, toLabel, label       []string
	fromIP, toIP, ip                []string
	fromPort, toPort, port          []string
	fromIdentity, toIdentity, ident []uint
	protocol, verdict, dropReason   []string
	direction, types, node          []string
	reply, notReply                 bool
}

func (ff *flowFilterFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	triple := func(p *[3]*[]string, name, what string) {
		fs.StringSliceVar(p[0], "from-"+name, nil, "Flows from this "+what)
		fs.StringSliceVar(p[1], "to-"+name, nil, "Flows to this "+what)
		fs.StringSliceVar(p[2], name, nil, "Flows from or to this "+what)
	}
	triple(&[3]*[]string{&ff.fromPod, &ff.toPod, &ff.pod}, "pod", "pod ([namespace/]name prefix)")
	triple(&[3]*[]string{&ff.fromSvc, &ff.toSvc, &ff.svc}, "service", "service ([namespace/]name prefix)")
	triple(&[3]*[]string{&ff.fromLabel, &ff.toLabel, &ff.label}, "label", "label selector (k8s:app=web,tier)")
	triple(&[3]*[]string{&ff.fromIP, &ff.toIP, &ff.ip}, "ip", "IP address or CIDR")
	triple(&[3]*[]string{&ff.fromPort, &ff.toPort, &ff.port}, "port", "L4 port")
	fs.StringSliceVar(&ff.fromNS, "from-namespace", nil, "Flows from pods of this namespace")
	fs.StringSliceVar(&ff.toNS, "to-namespace", nil, "Flows to pods of this namespace")
	fs.StringSliceVarP(&ff.ns, "namespace", "n", nil, "Flows from or to pods of this namespace")
	fs.UintSliceVar(&ff.fromIdentity, "from-identity", nil, "Flows from this security identity")
	fs.UintSliceVar(&ff.toIdentity, "to-identity", nil, "Flows to this security identity")
	fs.UintSliceVar(&ff.ident, "identity", nil, "Flows from or to this security identity")
	fs.StringSliceVar(&ff.protocol, "protocol", nil, "L4 protocol: tcp, udp, sctp, icmp, icmpv4, icmpv6")
	fs.StringSliceVar(&ff.verdict, "verdict", nil, "Verdict: FORWARDED, DROPPED, AUDIT, ...")
	fs.StringSliceVar(&ff.dropReason, "drop-reason-desc", nil, "Drop reason: POLICY_DENIED, POLICY_DENY, ...")
	fs.StringSliceVar(&ff.direction, "traffic-direction", nil, "Traffic direction: ingress or egress")
	fs.StringSliceVarP(&ff.types, "type", "t", nil, "Event type: trace, drop, policy-verdict (trace:to-endpoint for a sub type)")
	fs.StringSliceVar(&ff.node, "node-name", nil, "Node name pattern ([cluster/]node, * for any run of characters)")
	fs.BoolVar(&ff.reply, "reply", false, "Only reply flows")
	fs.BoolVar(&ff.notReply, "not-reply", false, "Only flows that are not replies")
}

// build returns the whitelist as Hubble's CLI builds it: the from-/to-
// flags in both of two filters, each either-end flag on the source in
// the first and on the destination in the second (one filter when they
// are the same); then the namespaces, which qualify the pod and service
// names of their end that have none (and, with no pod or service there,
// select that end's pods of the namespace).
func (ff *flowFilterFlags) build() ([]*flow.FlowFilter, error) {
	for flag, ids := range map[string][]uint{"--from-identity": ff.fromIdentity, "--to-identity": ff.toIdentity, "--identity": ff.ident} {
		for _, id := range ids {
			if id > math.MaxUint32 {
				return nil, fmt.Errorf("%s: %d is not a security identity (at most %d)", flag, id, uint32(math.MaxUint32))
			}
		}
	}
	if err := ff.conflicts(); err != nil {
		return nil, err
	}
	left := &flow.FlowFilter{
		SourcePod: ff.fromPod, DestinationPod: ff.toPod, SourceService: ff.fromSvc, DestinationService: ff.toSvc,
		SourceLabel: ff.fromLabel, DestinationLabel: ff.toLabel, SourceIp: ff.fromIP, DestinationIp: ff.toIP,
		SourcePort: ff.fromPort, DestinationPort: ff.toPort, SourceIdentity: uint32s(ff.fromIdentity), DestinationIdentity: uint32s(ff.toIdentity),
		Protocol: ff.protocol, NodeName: ff.node,
	}
	if err := ff.enums(left); err != nil {
		return nil, err
	}
	right := cloneFilter(left)
	left.SourcePod, right.DestinationPod = append(left.SourcePod, ff.pod...), append(right.DestinationPod, ff.pod...)
	left.SourceService, right.DestinationService = append(left.SourceService, ff.svc...), append(right.DestinationService, ff.svc...)
	left.SourceLabel, right.DestinationLabel = append(left.SourceLabel, ff.label...), append(right.DestinationLabel, ff.label...)
	left.SourceIp, right.DestinationIp = append(left.SourceIp, ff.ip...), append(right.DestinationIp, ff.ip...)
	left.SourcePort, right.DestinationPort = append(left.SourcePort, ff.port...), append(right.DestinationPort, ff.port...)
	left.SourceIdentity, right.DestinationIdentity = append(left.SourceIdentity, uint32s(ff.ident)...), append(right.DestinationIdentity, uint32s(ff.ident)...)
	for _, f := range []*flow.FlowFilter{left, right} {
		qualify(&f.DestinationPod, &f.DestinationService, ff.toNS)
		qualify(&f.SourcePod, &f.SourceService, ff.fromNS)
	}
	qualify(&left.SourcePod, &left.SourceService, ff.ns)
	qualify(&right.DestinationPod, &right.DestinationService, ff.ns)
	if proto.Equal(left, right) {
		if isEmptyFilter(left) {
			return nil, nil
		}
		return []*flow.FlowFilter{left}, nil
	}
	return []*flow.FlowFilter{left, right}, nil
}

// conflicts refuses the flags Hubble's CLI refuses to combine: an
// either-end flag with a flag of one end of the same kind (the either
// end's two filters would widen the query), and --namespace with a pod
// or service of one end.
func (ff *flowFilterFlags) conflicts() error {
	for _, c := range []struct {
		a, b   string
		aa, bb int
	}{
		{"pod", "from-pod", len(ff.pod), len(ff.fromPod)}, {"pod", "to-pod", len(ff.pod), len(ff.toPod)},
		{"service", "from-service", len(ff.svc), len(ff.fromSvc)}, {"service", "to-service", len(ff.svc), len(ff.toSvc)},
		{"label", "from-label", len(ff.label), len(ff.fromLabel)}, {"label", "to-label", len(ff.label), len(ff.toLabel)},
		{"ip", "from-ip", len(ff.ip), len(ff.fromIP)}, {"ip", "to-ip", len(ff.ip), len(ff.toIP)},
		{"port", "from-port", len(ff.port), len(ff.fromPort)}, {"port", "to-port", len(ff.port), len(ff.toPort)},
		{"identity", "from-identity", len(ff.ident), len(ff.fromIdentity)}, {"identity", "to-identity", len(ff.ident), len(ff.toIdentity)},
		{"namespace", "from-pod", len(ff.ns), len(ff.fromPod)}, {"namespace", "to-pod", len(ff.ns), len(ff.toPod)},
		{"namespace", "from-service", len(ff.ns), len(ff.fromSvc)}, {"namespace", "to-service", len(ff.ns), len(ff.toSvc)},
	} {
		if c.aa > 0 && c.bb > 0 {
			return fmt.Errorf("filters --%s and --%s cannot be combined", c.a, c.b)
		}
	}
	return nil
}

// enums parses the flags with enumerated values into f.
func (ff *flowFilterFlags) enums(f *flow.FlowFilter) error {
	for _, v := range ff.verdict {
		n, ok := flow.Verdict_value[strings.ToUpper(v)]
		if !ok {
			return fmt.Errorf("--verdict: %q is not a verdict (FORWARDED, DROPPED, AUDIT, ...)", v)
		}
		f.Verdict = append(f.Verdict, flow.Verdict(n))
	}
	for _, v := range ff.dropReason {
		n, ok := flow.DropReason_value[strings.ToUpper(v)]
		if !ok {
			return fmt.Errorf("--drop-reason-desc: %q is not a drop reason (POLICY_DENIED, ...)", v)
		}
		f.DropReasonDesc = append(f.DropReasonDesc, flow.DropReason(n))
	}
	for _, v := range ff.direction {
		n, ok := flow.TrafficDirection_value[strings.ToUpper(v)]
		if !ok || n == 0 {
			return fmt.Errorf("--traffic-direction: %q is not ingress or egress", v)
		}
		f.TrafficDirection = append(f.TrafficDirection, flow.TrafficDirection(n))
	}
	for _, v := range ff.types {
		et, err := eventTypeFilter(v)
		if err != nil {
			return err
		}
		f.EventType = append(f.EventType, et)
	}
	if ff.reply {
		f.Reply = append(f.Reply, true)
	}
	if ff.notReply {
		f.Reply = append(f.Reply, false)
	}
	return nil
}

var eventTypes = map[string]int32{"drop": 1, "trace": 4, "policy-verdict": 5}

func eventTypeFilter(s string) (*flow.EventTypeFilter, error) {
	name, sub, hasSub := strings.Cut(s, ":")
	t, ok := eventTypes[name]
	if !ok {
		return nil, fmt.Errorf("--type: %q is not trace, drop or policy-verdict", s)
	}
	et := &flow.EventTypeFilter{Type: t}
	if !hasSub {
		return et, nil
	}
	for n, point := range traceObservationPoints {
		if point == sub && t == 4 {
			et.MatchSubType, et.SubType = true, n
			return et, nil
		}
	}
	if n, err := strconv.Atoi(sub); err == nil {
		et.MatchSubType, et.SubType = true, int32(n)
		return et, nil
	}
	return nil, fmt.Errorf("--type: %q has an unknown sub type", s)
}

// qualify gives the pod and service names of one end that have no
// namespace each of namespaces (a name without one and no namespace is
// left for the server: "default"); with neither a pod nor a service
// there, it selects the end's pods of the namespaces ("ns/").
func qualify(pods, services *[]string, namespaces []string) {
	if len(namespaces) == 0 {
		return
	}
	if len(*pods) == 0 && len(*services) == 0 {
		*pods = []string{""}
	}
	*pods, *services = withNamespaces(*pods, namespaces), withNamespaces(*services, namespaces)
}

func withNamespaces(names, namespaces []string) []string {
	var out []string
	for _, n := range names {
		if strings.Contains(n, "/") {
			out = append(out, n)
			continue
		}
		for _, ns := range namespaces {
			out = append(out, ns+"/"+n)
		}
	}
	return out
}

func cloneFilter(f *flow.FlowFilter) *flow.FlowFilter {
	return proto.Clone(f).(*flow.FlowFilter)
}

func uint32s(v []uint) []uint32 {
	var out []uint32
	for _, n := range v {
		out = append(out, uint32(n))
	}
	return out
}

func isEmptyFilter(f *flow.FlowFilter) bool {
	return proto.Size(f) == 0 // no field set
}
