package policycell

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// traceParams are what the trace handler needs: the importer, the size of
// the policy maps when the agent runs a datapath and, to name sides as
// pods or addresses, the ipcache when the agent runs one.
type traceParams struct {
	cell.In

	Importer *importer
	MapLimit policy.MapStateLimit `optional:"true"`
	IPCache  ipcache.IPCache      `optional:"true"`
}

// newTraceHandler serves POST /v1/policy/trace (`apiary policy trace`).
func newTraceHandler(p traceParams) api.HandlerOut {
	l := p.Importer
	return api.NewHandlerOut(http.MethodPost, "/v1/policy/trace", func(w http.ResponseWriter, r *http.Request) {
		var req models.PolicyTraceRequest
		if err := decodeJSON(r, &req); err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		q, err := l.parseTrace(req, p.IPCache)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		q.mapMax = int(p.MapLimit)
		api.WriteJSON(w, http.StatusOK, l.trace(q))
	})
}

// traceQuery is a parsed trace request.
type traceQuery struct {
	src, dst tracePeer
	proto    policyapi.Protocol
	port     uint16
	dport    string
	mapMax   int // --bpf-policy-map-max; 0 without a datapath
}

// parseTrace reads both sides and the port. A side is a pod ("ns/pod",
// "cluster/ns/pod") or an address, found in the ipcache, or a label list:
// labels default to source k8s, "ns:<name>" is the namespace label, and
// every set gets the local cluster label, as endpoints do.
func (l *importer) parseTrace(req models.PolicyTraceRequest, ipc ipcache.IPCache) (traceQuery, error) {
	var q traceQuery
	var err error
	if q.src, err = l.traceSide("source", req.Source, ipc); err != nil {
		return q, err
	}
	if q.dst, err = l.traceSide("destination", req.Destination, ipc); err != nil {
		return q, err
	}
	q.proto, q.port, err = parseDPort(req.DPort)
	q.dport = fmt.Sprintf("%d/%s", q.port, q.proto)
	if err == nil {
		err = checkICMPFamily(q.proto, req.Source, req.Destination)
	}
	return q, err
}

// checkICMPFamily refuses an ICMP trace to or from an IPv6 address, and
// an ICMPv6 one with an IPv4 address: no such packet exists.
func checkICMPFamily(proto policyapi.Protocol, sides ...[]string) error {
	family, ok := proto.ICMPFamily()
	if !ok {
		return nil
	}
	for _, ss := range sides {
		if len(ss) != 1 {
			continue
		}
		if a, err := netip.ParseAddr(ss[0]); err == nil && a.Unmap().Is6() != (family == policyapi.ICMPv6) {
			return fmt.Errorf("dport: protocol %s is %s only, and %s is not an %s address", proto, family, a, family)
		}
	}
	return nil
}

func (l *importer) traceSide(what string, ss []string, ipc ipcache.IPCache) (tracePeer, error) {
	if len(ss) == 0 {
		return tracePeer{}, fmt.Errorf("%s: no labels, pod or address", what)
	}
	if len(ss) == 1 && (isPodRef(ss[0]) || isAddr(ss[0])) {
		p, err := resolvePod(ipc, l.alloc, l.opts.ClusterName, ss[0])
		if err != nil {
			return tracePeer{}, fmt.Errorf("%s: %w", what, err)
		}
		return p, nil
	}
	list := make([]string, 0, len(ss))
	for _, s := range ss {
		if ns, ok := strings.CutPrefix(s, "ns:"); ok {
			s = labels.SourceK8s + ":" + labels.KeyPodNamespace + "=" + ns
		}
		if isPodRef(s) || isAddr(s) {
			return tracePeer{}, fmt.Errorf("%s: %q: a pod or an address stands alone, not in a label list", what, s)
		}
		list = append(list, s)
	}
	ls, err := labels.ParseList(labels.SourceK8s, list...)
	if err != nil {
		return tracePeer{}, fmt.Errorf("%s: %w", what, err)
	}
	if _, ok := ls.Get(labels.KeyPolicyCluster); !ok {
		ls = ls.With(labels.New(labels.SourceK8s, labels.KeyPolicyCluster, l.opts.ClusterName))
	}
	return tracePeer{labels: ls}, nil
}

// parseDPort reads "6379/TCP" or "6379" (TCP), or for ICMP and ICMPv6
// the message type in the port's place, a number or a name icmps rules
// accept: "8/ICMP", "EchoRequest/ICMPv6".
func parseDPort(s string) (policyapi.Protocol, uint16, error) {
	portStr, protoStr, found := strings.Cut(s, "/")
	proto := policyapi.ProtoTCP
	if found {
		proto = policyapi.Protocol(strings.ToUpper(protoStr))
		if proto == "ICMPV6" {
			proto = policyapi.ProtoICMPv6
		}
	}
	if family, ok := proto.ICMPFamily(); ok {
		t, err := policyapi.ParseICMPType(family, portStr)
		if err != nil {
			return "", 0, fmt.Errorf("dport %q: the ICMP type: %w", s, err)
		}
		return proto, uint16(t), nil
	}
	if _, ok := policy.ProtoOf(proto); !ok {
		return "", 0, fmt.Errorf("dport %q: protocol must be TCP, UDP, SCTP, ICMP or ICMPv6", s)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return "", 0, fmt.Errorf("dport %q: port must be 1..65535", s)
	}
	return proto, uint16(port), nil
}

// trace resolves the policies of both sides. When both have an identity
// (found in the ipcache, or an identity in use with the given labels) the
// verdicts come from their map states, as the datapath would decide;
// otherwise from the rules (Evaluate): a trace never allocates an
// identity, which would be published to the whole cluster.
func (l *importer) trace(q traceQuery) *models.PolicyTrace {
	src, dst := l.traceIdentity(q.src), l.traceIdentity(q.dst)
	out := &models.PolicyTrace{
		Revision:       l.repo.Revision(),
		Source:         labelStrings(q.src.labels),
		Destination:    labelStrings(q.dst.labels),
		SourcePod:      q.src.pod,
		DestinationPod: q.dst.pod,
		DPort:          q.dport,
		PolicyMapMax:   q.mapMax,
	}
	if src != nil {
		out.SourceIdentity = uint32(src.ID)
	}
	if dst != nil {
		out.DestinationIdentity = uint32(dst.ID)
	}
	rules := l.repo.Rules()
	srcSubject, srcPeer := l.traceSides(q.src, src)
	dstSubject, dstPeer := l.traceSides(q.dst, dst)
	out.Egress = traceDirection(rules, srcSubject, dstPeer, policy.Egress, q)
	out.Ingress = traceDirection(rules, dstSubject, srcPeer, policy.Ingress, q)
	if src != nil && dst != nil {
		l.mapStateVerdict(&out.Egress, src, dst, q.src.named, policy.Egress, q)
		l.mapStateVerdict(&out.Ingress, dst, src, q.dst.named, policy.Ingress, q)
	}
	if policy.IsNeighbourDiscovery(q.proto, q.port) {
		// The datapath passes neighbour discovery before any policy.
		for _, d := range []*models.PolicyTraceDirection{&out.Egress, &out.Ingress} {
			d.Allowed, d.VerdictFrom, d.MapStateKeys = true, models.VerdictFromNeighbourDiscovery, 0
		}
	}
	out.Allowed = out.Egress.Allowed && out.Ingress.Allowed
	return out
}

// traceIdentity returns the identity of one side: the one found in the
// ipcache, or the identity in use with its labels; nil when there is
// none.
func (l *importer) traceIdentity(p tracePeer) *identity.Identity {
	if p.id != nil {
		return p.id
	}
	return l.alloc.LookupIdentity(p.labels)
}

// traceSides returns one side of a trace for rule evaluation: as the
// subject, its labels and its own named ports (a pod's, from the
// ipcache); as the peer, its labels and the named ports of its identity's
// endpoints, as the engine resolves egress named ports (none without an
// identity or a PeerNamedPorts source).
func (l *importer) traceSides(p tracePeer, id *identity.Identity) (subject, peer policy.Side) {
	subject = policy.Side{Labels: p.labels, NamedPorts: p.named}
	peer = policy.Side{Labels: p.labels}
	if src := l.repo.PeerNamedPorts(); src != nil && id != nil {
		peer.NamedPorts = src.NamedPorts(id.ID)
	}
	return subject, peer
}

// traceDirection lists the rules selecting subject in direction dir and
// their entries covering the traffic with peer, and decides it from the
// rules.
func traceDirection(rules []*policyapi.Rule, subject, peer policy.Side, dir policy.Direction, q traceQuery) models.PolicyTraceDirection {
	v := policy.Evaluate(rules, subject, peer, dir, q.port, q.proto)
	named := policy.ResolvingPorts(dir, subject, peer)
	out := models.PolicyTraceDirection{Rules: []models.PolicyTraceRule{}, Allowed: v.Allowed, VerdictFrom: models.VerdictFromRules}
	for _, rule := range rules {
		if !rule.Subject.Selects(subject.Labels) {
			continue
		}
		allow, deny, isolates := rule.Ingress, rule.IngressDeny, rule.DefaultDeny.Ingress
		if dir == policy.Egress {
			allow, deny, isolates = rule.Egress, rule.EgressDeny, rule.DefaultDeny.Egress
		}
		out.DefaultDeny = out.DefaultDeny || isolates
		out.Rules = append(out.Rules, models.PolicyTraceRule{
			Policy: ruleName(rule),
			Allows: coveringEntries(allow, named, peer.Labels, q),
			Denies: coveringEntries(deny, named, peer.Labels, q),
		})
	}
	return out
}

// mapStateVerdict replaces the rules' verdict of a direction with the one
// read off the subject's map state, and records its size.
func (l *importer) mapStateVerdict(out *models.PolicyTraceDirection, subject, peer *identity.Identity, named []policyapi.NamedPort, dir policy.Direction, q traceQuery) {
	sp := l.repo.Resolve(subject)
	ep := sp.DistillPolicy(named)
	defer ep.Detach()
	proto, _ := policy.ProtoOf(q.proto) // checked by parseTrace
	out.Allowed = policy.Verdict(ep.MapState(), peer.ID, dir, proto, q.port)
	out.VerdictFrom = models.VerdictFromMapState
	out.MapStateKeys = ep.Len()
}

// ruleName names a rule for people: "CiliumNetworkPolicy
// default/l4-policy spec (file l4.yaml)".
func ruleName(rule *policyapi.Rule) string {
	value := func(source, key string) string {
		l, ok := rule.Labels.Get(key)
		if !ok || l.Source != source {
			return ""
		}
		return l.Value
	}
	name := value(labels.SourceK8s, policyapi.LabelPolicyName)
	if ns := value(labels.SourceK8s, policyapi.LabelPolicyNamespace); ns != "" {
		name = ns + "/" + name
	}
	from := value(SourceApiary, LabelPolicySource)
	if file := value(SourceApiary, LabelPolicyFile); file != "" {
		from += " " + file
	}
	return fmt.Sprintf("%s %s %s (%s)", value(labels.SourceK8s, policyapi.LabelPolicyDerivedFrom), name, rule.Field, from)
}

// coveringEntries returns the fields of the entries covering traffic
// with a peer labelled ls on the query's port, named ports resolved
// against named (ResolvingPorts).
func coveringEntries(entries []policyapi.PeerRule, named []policyapi.NamedPort, ls labels.Labels, q traceQuery) []string {
	var out []string
	for _, e := range entries {
		if policy.Covers(e, named, ls, q.port, q.proto) {
			out = append(out, e.Field)
		}
	}
	return out
}

func labelStrings(ls labels.Labels) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
	}
	return out
}

// maxTraceBody bounds a trace request: two lists of labels.
const maxTraceBody = 1 << 20

// decodeJSON decodes a request body strictly.
func decodeJSON(r *http.Request, v any) error {
	if err := api.DecodeStrict(io.LimitReader(r.Body, maxTraceBody), v); err != nil {
		return fmt.Errorf("decode request body: %w", err)
	}
	return nil
}
