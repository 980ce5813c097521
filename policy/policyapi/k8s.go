package policyapi

import (
	"encoding/json"
	"slices"

	"github.com/apiary-net/apiary/policy/labels"
)

var (
	networkPolicySpec = objectSpec{fields: []string{"apiVersion", "kind", "metadata", "spec", "status"}}
	npSpecSpec        = objectSpec{fields: []string{"podSelector", "policyTypes", "ingress", "egress"}}
	npPeerSpec        = objectSpec{fields: []string{"podSelector", "namespaceSelector", "ipBlock"}}
	ipBlockSpec       = objectSpec{fields: []string{"cidr", "except"}}
	npPortSpec        = objectSpec{fields: []string{"protocol", "port", "endPort"}}
)

// npDirection describes spec.ingress or spec.egress of a NetworkPolicy.
type npDirection struct {
	name, peers string
	spec        objectSpec
}

var (
	npIngress = npDirection{name: "ingress", peers: "from", spec: objectSpec{fields: []string{"from", "ports"}}}
	npEgress  = npDirection{name: "egress", peers: "to", spec: objectSpec{fields: []string{"to", "ports"}}}
)

// networkPolicyRules translates a Kubernetes NetworkPolicy into one Rule,
// the way Cilium does, with Kubernetes' semantics: the podSelector (all
// pods when empty or absent) is narrowed to the policy namespace; a rule
// without from/to (absent or empty) matches every peer; policyTypes,
// defaulted as the API server does, decides default deny.
func (d *decoder) networkPolicyRules(m map[string]any, meta objectMeta, opts Options) []*Rule {
	v, ok := get(m, "spec")
	if !ok {
		d.failf("spec", "required")
		return nil
	}
	spec, ok := d.object("spec", v, npSpecSpec)
	if !ok {
		return nil
	}
	sc := newScope(opts, meta.namespace)
	r := &Rule{Field: "spec", Labels: originLabels(meta.kind, meta.namespace, meta.name, meta.uid)}
	var sel EndpointSelector
	if ps, ok := get(spec, "podSelector"); ok {
		sel, _ = d.selector("spec.podSelector", ps, podKeys)
	}
	r.Subject = Subject{Kind: SubjectEndpoints, Selector: sel.with(sc.namespaceIs())}
	r.Ingress = d.npEntries(spec, npIngress, sc)
	r.Egress = d.npEntries(spec, npEgress, sc)
	r.DefaultDeny = d.policyTypes(spec)
	return []*Rule{r}
}

// policyTypes returns the default-deny directions: the listed policy
// types, or when none are listed Ingress, plus Egress if spec.egress has
// rules (the API server's defaulting).
func (d *decoder) policyTypes(spec map[string]any) DefaultDeny {
	v, ok := get(spec, "policyTypes")
	var types []string
	if ok {
		types, _ = d.stringList("spec.policyTypes", v)
	}
	if len(types) == 0 {
		egress, _ := spec["egress"].([]any)
		return DefaultDeny{Ingress: true, Egress: len(egress) > 0}
	}
	if len(types) > 2 {
		d.failf("spec.policyTypes", "may not list more than two policy types")
	}
	var dd DefaultDeny
	for i, t := range types {
		switch t {
		case "Ingress":
			dd.Ingress = true
		case "Egress":
			dd.Egress = true
		default:
			d.failf(index("spec.policyTypes", i), "%q is not Ingress or Egress", t)
		}
	}
	return dd
}

// npEntries translates spec.ingress or spec.egress.
func (d *decoder) npEntries(spec map[string]any, dir npDirection, sc scope) []PeerRule {
	path := field("spec", dir.name)
	items := d.optionalList("spec", spec, dir.name)
	var out []PeerRule
	for i, item := range items {
		p := index(path, i)
		pr := PeerRule{Field: index(dir.name, i), Peers: []Peer{}}
		rm, ok := d.object(p, item, dir.spec)
		if !ok {
			continue
		}
		peers := d.optionalList(p, rm, dir.peers)
		if len(peers) == 0 {
			pr.Peers = append(pr.Peers, Peer{Kind: PeerAny, Selector: &EndpointSelector{}})
		}
		for j, peer := range peers {
			if np, ok := d.npPeer(index(field(p, dir.peers), j), index(dir.peers, j), peer, sc); ok {
				pr.Peers = append(pr.Peers, np)
			}
		}
		pr.Ports = d.npPorts(p, rm)
		out = append(out, pr)
	}
	return out
}

// npPeer translates one from/to peer. podSelector alone selects pods of
// the policy namespace; namespaceSelector (namespace labels, or every
// namespace when empty) with an optional podSelector selects pods of the
// matching namespaces, both conditions in one peer; ipBlock is a CIDR
// peer. Pod peers are narrowed to the local cluster by default.
func (d *decoder) npPeer(path, rel string, v any, sc scope) (Peer, bool) {
	m, ok := d.object(path, v, npPeerSpec)
	if !ok {
		return Peer{}, false
	}
	ps, hasPod := get(m, "podSelector")
	ns, hasNS := get(m, "namespaceSelector")
	ib, hasIP := get(m, "ipBlock")
	switch {
	case hasIP && (hasPod || hasNS):
		d.failf(field(path, "ipBlock"), "must not be set together with podSelector or namespaceSelector")
	case hasIP:
		rule, ok := d.cidrRule(field(path, "ipBlock"), ib, ipBlockSpec, "cidr")
		return Peer{Field: rel, Kind: PeerCIDR, CIDR: &rule}, ok
	case !hasPod && !hasNS:
		d.failf(path, "one of podSelector, namespaceSelector or ipBlock is required")
	default:
		mark := len(d.errs)
		var sel EndpointSelector
		if hasPod {
			sel, _ = d.selector(field(path, "podSelector"), ps, podKeys)
		}
		if hasNS {
			nsSel, _ := d.selector(field(path, "namespaceSelector"), ns, namespaceKeys)
			if nsSel.IsWildcard() {
				nsSel = NewSelector(Requirement{Source: labels.SourceK8s, Key: labels.KeyPodNamespace, Operator: OpExists})
			}
			sel = sel.with(nsSel.requirements...)
		} else {
			sel = sel.with(sc.namespaceIs())
		}
		sel = sc.inCluster(sel)
		return Peer{Field: rel, Kind: PeerEndpoints, Selector: &sel}, !d.failed(mark)
	}
	return Peer{}, false
}

// npPorts reads the ports of a rule: protocol TCP (default), UDP or SCTP;
// port a number or a port name, absent for every port; endPort for a
// range from a numeric port.
func (d *decoder) npPorts(path string, m map[string]any) []PortProtocol {
	var out []PortProtocol
	for i, item := range d.optionalList(path, m, "ports") {
		p := index(field(path, "ports"), i)
		mark := len(d.errs)
		pm, ok := d.object(p, item, npPortSpec)
		if !ok {
			continue
		}
		pp := PortProtocol{Protocol: ProtoTCP}
		if v, ok := get(pm, "protocol"); ok {
			if s, ok := d.str(field(p, "protocol"), v); ok {
				pp.Protocol = Protocol(s)
				if !slices.Contains([]Protocol{ProtoTCP, ProtoUDP, ProtoSCTP}, pp.Protocol) {
					d.failf(field(p, "protocol"), "%q is not TCP, UDP or SCTP", s)
				}
			}
		}
		d.npPortNumber(p, pm, &pp)
		if !d.failed(mark) {
			out = append(out, pp)
		}
	}
	return out
}

// npPortNumber reads port and endPort into pp.
func (d *decoder) npPortNumber(path string, m map[string]any, pp *PortProtocol) {
	v, hasPort := get(m, "port")
	if hasPort {
		switch x := v.(type) {
		case json.Number:
			n, _ := d.integer(field(path, "port"), v, 1, 65535)
			pp.Port = uint16(n)
		case string:
			if msg := CheckPortName(x); msg != "" {
				d.failf(field(path, "port"), "%q is not a valid port name: a port name %s", x, msg)
			}
			pp.Name = x
		default:
			d.failf(field(path, "port"), "must be a port number or name, not %s", typeName(v))
		}
	}
	ev, ok := get(m, "endPort")
	if !ok {
		return
	}
	end, ok := d.integer(field(path, "endPort"), ev, 1, 65535)
	switch {
	case !ok:
	case !hasPort:
		d.failf(field(path, "endPort"), "requires port")
	case pp.Name != "":
		d.failf(field(path, "endPort"), "requires a numeric port, not the named port %q", pp.Name)
	case end < int64(pp.Port):
		d.failf(field(path, "endPort"), "%d is less than port %d", end, pp.Port)
	case end > int64(pp.Port):
		pp.EndPort = uint16(end)
	}
}
