package hubble

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
)

// match is one compiled condition of a FlowFilter.
type match func(*flow.Flow) bool

// Filter is a compiled list of FlowFilters: a flow matches when it
// matches any of them (all the set fields of one).
type Filter []match

// CompileFilters compiles Hubble's filters; an error names the field.
func CompileFilters(ffs []*flow.FlowFilter) (Filter, error) {
	out := make(Filter, 0, len(ffs))
	for i, ff := range ffs {
		m, err := compileOne(ff)
		if err != nil {
			return nil, fmt.Errorf("filter %d: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// Any reports whether f matches one of the filters.
func (fl Filter) Any(f *flow.Flow) bool {
	return slices.ContainsFunc(fl, func(m match) bool { return m(f) })
}

// Allows reports whether f passes an allow list and a deny list: it
// matches one allow filter (or there are none) and no deny filter.
func Allows(allow, deny Filter, f *flow.Flow) bool {
	return (len(allow) == 0 || allow.Any(f)) && !deny.Any(f)
}

func compileOne(ff *flow.FlowFilter) (match, error) {
	var ms []match
	add := func(m match, err error) error {
		if err == nil && m != nil {
			ms = append(ms, m)
		}
		return err
	}
	src := func(f *flow.Flow) *flow.Endpoint { return f.GetSource() }
	dst := func(f *flow.Flow) *flow.Endpoint { return f.GetDestination() }
	srcIP := func(f *flow.Flow) string { return f.GetIP().GetSource() }
	dstIP := func(f *flow.Flow) string { return f.GetIP().GetDestination() }
	pod := func(end func(*flow.Flow) *flow.Endpoint) func(*flow.Flow) (string, string) {
		return func(f *flow.Flow) (string, string) { return end(f).GetNamespace(), end(f).GetPodName() }
	}
	srcSvc := func(f *flow.Flow) (string, string) {
		return f.GetSourceService().GetNamespace(), f.GetSourceService().GetName()
	}
	dstSvc := func(f *flow.Flow) (string, string) {
		return f.GetDestinationService().GetNamespace(), f.GetDestinationService().GetName()
	}
	err := errorsJoin(
		unsupported(ff),
		add(ipMatch("source_ip", ff.SourceIp, srcIP)),
		add(ipMatch("destination_ip", ff.DestinationIp, dstIP)),
		add(nameMatch("source_pod", ff.SourcePod, pod(src))),
		add(nameMatch("destination_pod", ff.DestinationPod, pod(dst))),
		add(nameMatch("source_service", ff.SourceService, srcSvc)),
		add(nameMatch("destination_service", ff.DestinationService, dstSvc)),
		add(labelMatch("source_label", ff.SourceLabel, src)),
		add(labelMatch("destination_label", ff.DestinationLabel, dst)),
		add(portMatch("source_port", ff.SourcePort, true)),
		add(portMatch("destination_port", ff.DestinationPort, false)),
		add(protocolMatch(ff.Protocol)),
		add(eventTypeMatch(ff.EventType)),
	)
	if err != nil {
		return nil, err
	}
	ms = append(ms, fieldMatches(ff)...)
	return func(f *flow.Flow) bool {
		for _, m := range ms {
			if !m(f) {
				return false
			}
		}
		return true
	}, nil
}

// fieldMatches are the conditions that cannot be malformed.
func fieldMatches(ff *flow.FlowFilter) []match {
	var ms []match
	if ids := ff.SourceIdentity; len(ids) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return slices.Contains(ids, f.GetSource().GetIdentity()) })
	}
	if ids := ff.DestinationIdentity; len(ids) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return slices.Contains(ids, f.GetDestination().GetIdentity()) })
	}
	if vs := ff.Verdict; len(vs) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return slices.Contains(vs, f.GetVerdict()) })
	}
	if rs := ff.DropReasonDesc; len(rs) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return slices.Contains(rs, f.GetDropReasonDesc()) })
	}
	if ds := ff.TrafficDirection; len(ds) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return slices.Contains(ds, f.GetTrafficDirection()) })
	}
	if rs := ff.Reply; len(rs) > 0 {
		ms = append(ms, func(f *flow.Flow) bool {
			return f.GetIsReply() != nil && slices.Contains(rs, f.GetIsReply().GetValue())
		})
	}
	if es := ff.Encrypted; len(es) > 0 {
		// As Hubble: the flow's IP.encrypted (apiary encrypts nothing:
		// true selects no flow, false every one).
		ms = append(ms, func(f *flow.Flow) bool { return slices.Contains(es, f.GetIP().GetEncrypted()) })
	}
	if ns := ff.NodeName; len(ns) > 0 {
		ms = append(ms, func(f *flow.Flow) bool {
			return slices.ContainsFunc(ns, func(n string) bool { return globMatch(n, f.GetNodeName()) })
		})
	}
	if cs := ff.SourceClusterName; len(cs) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return slices.Contains(cs, f.GetSource().GetClusterName()) })
	}
	if cs := ff.DestinationClusterName; len(cs) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return slices.Contains(cs, f.GetDestination().GetClusterName()) })
	}
	if vs := ff.IpVersion; len(vs) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return f.GetIP() != nil && slices.Contains(vs, f.GetIP().GetIpVersion()) })
	}
	if fl := ff.TcpFlags; len(fl) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return tcpFlagsMatch(fl, f.GetL4().GetTCP().GetFlags()) })
	}
	if ws := ff.SourceWorkload; len(ws) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return workloadMatch(ws, f.GetSource()) })
	}
	if ws := ff.DestinationWorkload; len(ws) > 0 {
		ms = append(ms, func(f *flow.Flow) bool { return workloadMatch(ws, f.GetDestination()) })
	}
	return ms
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ipMatch matches addresses or CIDRs.
func ipMatch(field string, vals []string, get func(*flow.Flow) string) (match, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	var prefixes []netip.Prefix
	for _, v := range vals {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return nil, fmt.Errorf("%s: %q is neither an IP address nor a CIDR", field, v)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		prefixes = append(prefixes, p.Masked())
	}
	return func(f *flow.Flow) bool {
		a, err := netip.ParseAddr(get(f))
		return err == nil && slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(a) })
	}, nil
}

// nameMatch matches "namespace/name-prefix", "namespace/" or
// "name-prefix" (namespace default) against the namespace and name get
// returns (a pod's, a service's), as Hubble does; nothing matches an end
// without either.
func nameMatch(field string, vals []string, get func(*flow.Flow) (ns, name string)) (match, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	type nsName struct{ ns, prefix string }
	var want []nsName
	for _, v := range vals {
		if v == "" {
			return nil, fmt.Errorf("%s: a name must not be empty", field)
		}
		ns, name, ok := strings.Cut(v, "/")
		if !ok {
			ns, name = "default", v
		}
		want = append(want, nsName{ns, name})
	}
	return func(f *flow.Flow) bool {
		ns, name := get(f)
		if ns == "" && name == "" {
			return false
		}
		return slices.ContainsFunc(want, func(w nsName) bool {
			return (w.ns == "" || w.ns == ns) && strings.HasPrefix(name, w.prefix)
		})
	}, nil
}

// unsupported are the filter fields apiary's flows cannot match (no L7
// or DNS visibility, no FQDN names, no flow UUIDs or translated source
// addresses, no interfaces, node labels, IP tracing or CEL): a filter
// naming one is refused, not taken as matching every flow.
func unsupported(ff *flow.FlowFilter) error {
	for _, x := range []struct {
		field string
		set   bool
	}{
		{"uuid", len(ff.Uuid) > 0},
		{"source_ip_xlated", len(ff.SourceIpXlated) > 0},
		{"source_fqdn", len(ff.SourceFqdn) > 0},
		{"destination_fqdn", len(ff.DestinationFqdn) > 0},
		{"interface", len(ff.Interface) > 0},
		{"http_status_code", len(ff.HttpStatusCode) > 0},
		{"http_method", len(ff.HttpMethod) > 0},
		{"http_path", len(ff.HttpPath) > 0},
		{"http_url", len(ff.HttpUrl) > 0},
		{"http_header", len(ff.HttpHeader) > 0},
		{"dns_query", len(ff.DnsQuery) > 0},
		{"node_labels", len(ff.NodeLabels) > 0},
		{"trace_id", len(ff.TraceId) > 0},
		{"ip_trace_id", len(ff.IpTraceId) > 0},
		{"experimental.cel_expression", len(ff.GetExperimental().GetCelExpression()) > 0},
	} {
		if x.set {
			return fmt.Errorf("%s: apiary's flows have no such field (L3/L4 flows only): the filter would match none or all", x.field)
		}
	}
	if u := ff.ProtoReflect().GetUnknown(); len(u) > 0 {
		return fmt.Errorf("the filter has fields apiary's Hubble API does not know (%d bytes; from a newer client?): it would match as if they were not there", len(u))
	}
	return nil
}

// portMatch matches L4 ports.
func portMatch(field string, vals []string, source bool) (match, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	var ports []uint32
	for _, v := range vals {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a port number", field, v)
		}
		ports = append(ports, uint32(n))
	}
	return func(f *flow.Flow) bool {
		sp, dp, ok := flowPorts(f)
		p := dp
		if source {
			p = sp
		}
		return ok && slices.Contains(ports, p)
	}, nil
}

func flowPorts(f *flow.Flow) (sport, dport uint32, ok bool) {
	l4 := f.GetL4()
	switch {
	case l4.GetTCP() != nil:
		return l4.GetTCP().GetSourcePort(), l4.GetTCP().GetDestinationPort(), true
	case l4.GetUDP() != nil:
		return l4.GetUDP().GetSourcePort(), l4.GetUDP().GetDestinationPort(), true
	case l4.GetSCTP() != nil:
		return l4.GetSCTP().GetSourcePort(), l4.GetSCTP().GetDestinationPort(), true
	}
	return 0, 0, false
}

// protocolMatch matches tcp, udp, sctp, icmp, icmpv4, icmpv6.
func protocolMatch(vals []string) (match, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	var want []string
	for _, v := range vals {
		p := strings.ToLower(v)
		switch p {
		case "tcp", "udp", "sctp", "icmp", "icmpv4", "icmpv6":
			want = append(want, p)
		default:
			return nil, fmt.Errorf("protocol: %q is not tcp, udp, sctp, icmp, icmpv4 or icmpv6", v)
		}
	}
	return func(f *flow.Flow) bool {
		l4 := f.GetL4()
		return slices.ContainsFunc(want, func(p string) bool {
			switch p {
			case "tcp":
				return l4.GetTCP() != nil
			case "udp":
				return l4.GetUDP() != nil
			case "sctp":
				return l4.GetSCTP() != nil
			case "icmpv4":
				return l4.GetICMPv4() != nil
			case "icmpv6":
				return l4.GetICMPv6() != nil
			}
			return l4.GetICMPv4() != nil || l4.GetICMPv6() != nil
		})
	}, nil
}

// eventTypeMatch matches Cilium's event types (and sub types when set).
func eventTypeMatch(vals []*flow.EventTypeFilter) (match, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	return func(f *flow.Flow) bool {
		et := f.GetEventType()
		return slices.ContainsFunc(vals, func(w *flow.EventTypeFilter) bool {
			return et.GetType() == w.GetType() && (!w.GetMatchSubType() || et.GetSubType() == w.GetSubType())
		})
	}, nil
}

func tcpFlagsMatch(want []*flow.TCPFlags, got *flow.TCPFlags) bool {
	if got == nil {
		return false
	}
	return slices.ContainsFunc(want, func(w *flow.TCPFlags) bool {
		return (!w.SYN || got.SYN) && (!w.ACK || got.ACK) && (!w.FIN || got.FIN) && (!w.RST || got.RST) &&
			(!w.PSH || got.PSH) && (!w.URG || got.URG) && (!w.ECE || got.ECE) && (!w.CWR || got.CWR) && (!w.NS || got.NS)
	})
}

func workloadMatch(want []*flow.Workload, ep *flow.Endpoint) bool {
	return slices.ContainsFunc(want, func(w *flow.Workload) bool {
		return slices.ContainsFunc(ep.GetWorkloads(), func(g *flow.Workload) bool {
			return (w.GetKind() == "" || w.GetKind() == g.GetKind()) && (w.GetName() == "" || w.GetName() == g.GetName())
		})
	})
}

// globMatch matches a node-name pattern: "*" matches any run of
// characters but "/", as Hubble's node name filter.
func globMatch(pattern, name string) bool {
	if !strings.Contains(pattern, "/") && strings.Contains(name, "/") {
		_, name, _ = strings.Cut(name, "/") // a bare node pattern matches in any cluster
	}
	star := strings.Split(pattern, "*")
	if len(star) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, star[0]) {
		return false
	}
	rest := name[len(star[0]):]
	for _, part := range star[1 : len(star)-1] {
		i := strings.Index(rest, part)
		if i < 0 || strings.Contains(rest[:i], "/") {
			return false
		}
		rest = rest[i+len(part):]
	}
	last := star[len(star)-1]
	return strings.HasSuffix(rest, last) && !strings.Contains(rest[:len(rest)-len(last)], "/")
}
