package simulate

import (
	"fmt"
	"io"
	"strings"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// Verdicts of a query or a direction.
const (
	Allowed = "allowed"
	Denied  = "denied"
)

// Result is the answer to one query.
type Result struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Port is the destination port; for ICMP and ICMPv6 the message
	// type, in the port's place as the policy map keys it.
	Port     uint16 `json:"port"`
	Protocol string `json:"protocol"`
	// ICMPType is the message type of an ICMP or ICMPv6 query (the
	// same number as Port), absent for other protocols.
	ICMPType *uint8 `json:"icmp-type,omitempty"`
	// Verdict is Allowed when the source's egress and the destination's
	// ingress both allow the connection, else Denied.
	Verdict string `json:"verdict"`
	// Egress and Ingress say what decided each direction; set by
	// RunExplain only.
	Egress  *Decision `json:"egress,omitempty"`
	Ingress *Decision `json:"ingress,omitempty"`
}

// String formats the result as "x/a -> y/b 80/TCP ALLOWED"; an ICMP
// or ICMPv6 query has its message type in the port's place
// ("x/a -> y/b 8/ICMP ALLOWED"), as `apiary bpf policy get` shows ICMP
// keys.
func (r Result) String() string {
	return fmt.Sprintf("%s -> %s %d/%s %s", r.From, r.To, r.Port, r.Protocol, strings.ToUpper(r.Verdict))
}

// Decision is the verdict of one direction (the source's egress or the
// destination's ingress) and what decided it.
type Decision struct {
	Verdict string `json:"verdict"`
	// Reason is the deciding rule, deny rules first ("allowed by
	// CiliumNetworkPolicy default/l4-policy spec.ingress[0]", "denied by
	// ...") or one of "default deny",
	// "no policy (allow)", "not an endpoint (no policy)",
	// "endpoint of another cluster (no policy)" and "self (never leaves
	// the pod)".
	Reason string `json:"reason"`
}

// Reasons that are not rules.
const (
	ReasonDefaultDeny  = "default deny"
	ReasonNoPolicy     = "no policy (allow)"
	ReasonNotEndpoint  = "not an endpoint (no policy)"
	ReasonOtherCluster = "endpoint of another cluster (no policy)"
	ReasonSelf         = "self (never leaves the pod)"
	// ReasonNeighbourDiscovery is the reason of ICMPv6 types 133-137,
	// which the datapath lets through without policy.
	ReasonNeighbourDiscovery = "neighbour discovery (ICMPv6 133-137, never policed)"
)

// validateQuery checks query i: both sides resolve, the port and protocol
// are valid.
func (sim *Simulation) validateQuery(v *validator, i int, q Query) {
	entry := fmt.Sprintf("queries[%d] (%s -> %s)", i, q.From, q.To)
	for _, side := range []struct{ field, ref string }{{"from", q.From}, {"to", q.To}} {
		if side.ref == "" {
			v.errorf(entry, "%s is required", side.field)
		} else if _, err := sim.resolve(side.ref); err != nil {
			v.errorf(entry, "%s: %v", side.field, err)
		}
	}
	proto, _, errs := queryTraffic(q)
	v.check(entry, errs...)
	if family, ok := proto.ICMPFamily(); ok {
		for _, side := range []struct{ field, ref string }{{"from", q.From}, {"to", q.To}} {
			if p, err := sim.resolve(side.ref); err == nil && p.ip.IsValid() && p.ip.Is6() != (family == policyapi.ICMPv6) {
				v.errorf(entry, "%s: %s is not an %s address, and protocol %s is %s only", side.field, p.ip, family, proto, family)
			}
		}
	}
}

// queryTraffic returns a query's protocol and its port, which for ICMP
// and ICMPv6 is the message type (as the datapath's policy keys have
// it), with an error per bad field.
func queryTraffic(q Query) (policyapi.Protocol, uint16, []error) {
	proto, err := parseQueryProtocol(q.Protocol)
	family, isICMP := proto.ICMPFamily()
	switch {
	case isICMP && q.Port != 0:
		return proto, 0, []error{fmt.Errorf("port %d: an %s query has no port; give the message type in type", q.Port, proto)}
	case isICMP && q.Type == "":
		return proto, 0, []error{fmt.Errorf("type is required with protocol %s (a number or a name like %s)", proto, echoRequestName)}
	case isICMP:
		t, err := policyapi.ParseICMPType(family, q.Type)
		if err != nil {
			return proto, 0, []error{fmt.Errorf("type: %w", err)}
		}
		return proto, uint16(t), nil
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if q.Type != "" {
		errs = append(errs, fmt.Errorf("type %q: only ICMP and ICMPv6 queries have a type", q.Type))
	}
	if q.Port < 1 || q.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d is not in 1-65535", q.Port))
	}
	return proto, uint16(q.Port), errs
}

// echoRequestName is the type name hinted at in errors.
const echoRequestName = "EchoRequest"

// Run answers every query of the scenario, in order.
func (sim *Simulation) Run() []Result { return sim.run(false) }

// RunExplain answers every query and says, per direction, what decided.
func (sim *Simulation) RunExplain() []Result { return sim.run(true) }

func (sim *Simulation) run(explain bool) []Result {
	out := make([]Result, 0, len(sim.scenario.Queries))
	for _, q := range sim.scenario.Queries {
		out = append(out, sim.query(q, explain))
	}
	return out
}

// query answers one validated query.
func (sim *Simulation) query(q Query, explain bool) Result {
	proto, port, _ := queryTraffic(q)
	src, _ := sim.resolve(q.From)
	dst, _ := sim.resolve(q.To)
	pkt := packet{proto: proto, port: port}
	var egress, ingress Decision
	if src.ep != nil && src.ep == dst.ep {
		egress = Decision{Verdict: Allowed, Reason: ReasonSelf}
		ingress = egress
	} else {
		egress = sim.decide(src, dst, policy.Egress, pkt)
		ingress = sim.decide(dst, src, policy.Ingress, pkt)
	}
	return NewResult(QueryModel{Query: q, Protocol: proto, Port: pkt.port}, egress, ingress, explain)
}

// packet is the protocol and destination port (ICMP: type) of a query.
type packet struct {
	proto policyapi.Protocol
	port  uint16
}

// decide returns the verdict of subject's policy in dir for traffic with
// peer: the engine's verdict on the subject's map state, with the reason
// found by evaluating the rules.
func (sim *Simulation) decide(subject, peer peer, dir policy.Direction, pkt packet) Decision {
	switch {
	case subject.ep == nil:
		return Decision{Verdict: Allowed, Reason: ReasonNotEndpoint}
	case !subject.ep.local(sim.scenario.Cluster):
		return Decision{Verdict: Allowed, Reason: ReasonOtherCluster}
	case policy.IsNeighbourDiscovery(pkt.proto, pkt.port):
		return Decision{Verdict: Allowed, Reason: ReasonNeighbourDiscovery}
	}
	proto, _ := policy.ProtoOf(pkt.proto)
	allowed := policy.Verdict(sim.mapStates[subject.ep], peer.ident.ID, dir, proto, pkt.port)
	d := Decision{Verdict: Denied}
	if allowed {
		d.Verdict = Allowed
	}
	subjectSide := policy.Side{Labels: sim.epIdent[subject.ep].Labels, NamedPorts: subject.ep.ports}
	peerSide := policy.Side{Labels: peer.ident.Labels, NamedPorts: sim.peerPorts.NamedPorts(peer.ident.ID)}
	reason, ruleAllows := explain(sim.repo.Rules(), subjectSide, peerSide, dir, pkt)
	d.Reason = reason
	if ruleAllows != allowed {
		// The rule evaluation disagrees with the engine: say so rather
		// than explain the wrong thing.
		d.Reason = fmt.Sprintf("engine says %s; rule evaluation found %s", d.Verdict, reason)
	}
	return d
}

// String formats the decision as "allowed: <reason>".
func (d Decision) String() string { return d.Verdict + ": " + d.Reason }

// WriteText writes results one line each ("x/a -> y/b 80/TCP ALLOWED"),
// each followed by its egress and ingress decisions, indented, when it
// has them.
func WriteText(w io.Writer, results []Result) error {
	var b strings.Builder
	for _, r := range results {
		b.WriteString(r.String() + "\n")
		if r.Egress != nil {
			fmt.Fprintf(&b, "  egress:  %s\n  ingress: %s\n", r.Egress, r.Ingress)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
