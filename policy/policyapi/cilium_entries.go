package policyapi

import (
	"fmt"
	"maps"
	"strings"
)

// ciliumDirection describes one of ingress, ingressDeny, egress and
// egressDeny: the names of its peer fields and where its entries go.
type ciliumDirection struct {
	name string
	// endpoints, entities, cidr and cidrSet name the peer fields
	// ("fromEndpoints" or "toEndpoints", ...).
	endpoints, entities, cidr, cidrSet string
	spec                               objectSpec
	entries                            func(*Rule) *[]PeerRule
}

// Why fields of Cilium rules that apiary knows are not enforced.
const (
	whyRequires       = "requirement selectors (fromRequires/toRequires) are not implemented; add the requirement to each selector"
	whyNodes          = "node peers are not implemented; use the host or remote-node entity"
	whyGroups         = "cloud provider groups are not implemented; list the prefixes with toCIDRSet"
	whyAuthentication = "mutual authentication is not implemented"
	// Peers accepted but not enforced: they select nothing, as Cilium's
	// do with no DNS data or no such service, so the traffic they would
	// allow is denied while the entry still makes its direction
	// default-deny.
	notEnforcedFQDNs    = "not enforced: DNS-based peers need a DNS proxy, which apiary does not run; this peer selects nothing, so what it allows is denied"
	notEnforcedServices = "not enforced: service peers are not implemented; this peer selects nothing, so what it allows is denied (select the service's endpoints with toEndpoints)"
)

// Peers refused in deny rules: selecting nothing there would deny nothing.
const (
	whyFQDNsDeny    = "DNS-based (FQDN) peers need a DNS proxy; in a deny rule apiary could only deny nothing, so it refuses it"
	whyServicesDeny = "service peers are not implemented; in a deny rule apiary could only deny nothing, so it refuses it (deny the service's endpoints with toEndpoints)"
)

// selectsNothing are the peer fields of an egress entry that apiary
// accepts without enforcing them: each selects no peer.
var selectsNothing = map[string]string{"toFQDNs": notEnforcedFQDNs, "toServices": notEnforcedServices}

func entrySpec(prefix string, extra, notEnforced map[string]string) objectSpec {
	unsupported := map[string]string{
		prefix + "Requires": whyRequires,
		prefix + "Nodes":    whyNodes,
		prefix + "Groups":   whyGroups,
	}
	maps.Copy(unsupported, extra)
	return objectSpec{
		fields: []string{
			prefix + "Endpoints", prefix + "Entities", prefix + "CIDR", prefix + "CIDRSet", "toPorts", "icmps",
		},
		unsupported: unsupported,
		notEnforced: notEnforced,
	}
}

func newDirection(name, prefix string, extra, notEnforced map[string]string, entries func(*Rule) *[]PeerRule) ciliumDirection {
	return ciliumDirection{
		name:      name,
		endpoints: prefix + "Endpoints", entities: prefix + "Entities",
		cidr: prefix + "CIDR", cidrSet: prefix + "CIDRSet",
		spec:    entrySpec(prefix, extra, notEnforced),
		entries: entries,
	}
}

// ciliumDirections are the four rule lists of a Cilium rule.
var ciliumDirections = []ciliumDirection{
	newDirection("ingress", "from", map[string]string{"authentication": whyAuthentication}, nil,
		func(r *Rule) *[]PeerRule { return &r.Ingress }),
	newDirection("ingressDeny", "from", nil, nil,
		func(r *Rule) *[]PeerRule { return &r.IngressDeny }),
	newDirection("egress", "to", map[string]string{"authentication": whyAuthentication}, selectsNothing,
		func(r *Rule) *[]PeerRule { return &r.Egress }),
	// A deny whose peer selected nothing would deny nothing: refused.
	newDirection("egressDeny", "to", map[string]string{"toFQDNs": whyFQDNsDeny, "toServices": whyServicesDeny}, nil,
		func(r *Rule) *[]PeerRule { return &r.EgressDeny }),
}

// ciliumEntries translates the entries of one direction of a rule.
func (d *decoder) ciliumEntries(rulePath string, m map[string]any, dir ciliumDirection, sc scope, isInit bool) []PeerRule {
	v, ok := get(m, dir.name)
	if !ok {
		return nil
	}
	path := field(rulePath, dir.name)
	items, ok := d.list(path, v)
	if !ok {
		return nil
	}
	out := make([]PeerRule, 0, len(items))
	for i, item := range items {
		out = append(out, d.ciliumEntry(index(path, i), index(dir.name, i), item, dir, sc, isInit))
	}
	return out
}

// ciliumEntry translates one entry. An entry with ports but no peer
// field applies to every peer; an entry with neither (written "- {}")
// matches nothing but still turns default deny on, as in Cilium.
func (d *decoder) ciliumEntry(path, rel string, v any, dir ciliumDirection, sc scope, isInit bool) PeerRule {
	pr := PeerRule{Field: rel, Peers: []Peer{}}
	m, ok := d.object(path, v, dir.spec)
	if !ok {
		return pr
	}
	hasPeerField := false
	for _, f := range []string{dir.endpoints, dir.entities, dir.cidr, dir.cidrSet} {
		if _, ok := get(m, f); ok {
			hasPeerField = true
		}
	}
	for f := range dir.spec.notEnforced {
		if _, ok := get(m, f); ok {
			hasPeerField = true // a peer that selects nothing: not every peer
		}
	}
	pr.Peers = append(pr.Peers, d.endpointPeers(path, m, dir.endpoints, sc, isInit)...)
	pr.Peers = append(pr.Peers, d.entityPeers(path, m, dir.entities, sc)...)
	pr.Peers = append(pr.Peers, d.cidrPeers(path, m, dir.cidr)...)
	pr.Peers = append(pr.Peers, d.cidrSetPeers(path, m, dir.cidrSet)...)
	pr.Ports = d.toPorts(path, m)
	pr.ICMPs = d.icmps(path, m)
	if _, hasPorts := get(m, "toPorts"); hasPorts && len(pr.ICMPs) > 0 {
		d.failf(field(path, "icmps"), "must not be set together with toPorts; write a separate rule for ICMP")
	}
	if !hasPeerField && !pr.IsL3Only() {
		pr.Peers = []Peer{{Kind: PeerAny, Selector: &EndpointSelector{}}}
	}
	return pr
}

// endpointPeers reads fromEndpoints/toEndpoints.
func (d *decoder) endpointPeers(path string, m map[string]any, name string, sc scope, isInit bool) []Peer {
	items := d.optionalList(path, m, name)
	var peers []Peer
	for i, item := range items {
		sel, ok := d.selector(index(field(path, name), i), item, ciliumKeys)
		if !ok {
			continue
		}
		sel = sc.peer(sel, isInit)
		peers = append(peers, Peer{Field: index(name, i), Kind: PeerEndpoints, Selector: &sel})
	}
	return peers
}

// entityPeers reads fromEntities/toEntities, one peer per selector of
// each entity.
func (d *decoder) entityPeers(path string, m map[string]any, name string, sc scope) []Peer {
	items := d.optionalList(path, m, name)
	var peers []Peer
	for i, item := range items {
		p := index(field(path, name), i)
		s, ok := d.str(p, item)
		if !ok {
			continue
		}
		sels, ok := Entity(s).Selectors(sc.clusterName)
		if !ok {
			d.failf(p, "%q is not an entity (want one of %s)", s, entityList())
			continue
		}
		for _, sel := range sels {
			peers = append(peers, Peer{Field: index(name, i), Kind: PeerEntity, Entity: Entity(s), Selector: &sel})
		}
	}
	return peers
}

func entityList() string {
	names := make([]string, 0, len(Entities()))
	for _, e := range Entities() {
		names = append(names, string(e))
	}
	return strings.Join(names, ", ")
}

// cidrPeers reads fromCIDR/toCIDR: prefixes or bare addresses.
func (d *decoder) cidrPeers(path string, m map[string]any, name string) []Peer {
	items := d.optionalList(path, m, name)
	var peers []Peer
	for i, item := range items {
		p := index(field(path, name), i)
		s, ok := d.str(p, item)
		if !ok {
			continue
		}
		prefix, err := parsePrefix(s, true)
		if err != nil {
			d.fail(p, err)
			continue
		}
		peers = append(peers, Peer{Field: index(name, i), Kind: PeerCIDR, CIDR: &CIDRRule{Prefix: prefix}})
	}
	return peers
}

var cidrSetSpec = objectSpec{
	fields: []string{"cidr", "except"},
	unsupported: map[string]string{
		"cidrGroupRef":      "CIDR groups are not implemented; write the prefix in cidr",
		"cidrGroupSelector": "CIDR groups are not implemented; write the prefix in cidr",
	},
}

// cidrSetPeers reads fromCIDRSet/toCIDRSet: a prefix with exceptions.
func (d *decoder) cidrSetPeers(path string, m map[string]any, name string) []Peer {
	items := d.optionalList(path, m, name)
	var peers []Peer
	for i, item := range items {
		if rule, ok := d.cidrRule(index(field(path, name), i), item, cidrSetSpec, "cidr"); ok {
			peers = append(peers, Peer{Field: index(name, i), Kind: PeerCIDR, CIDR: &rule})
		}
	}
	return peers
}

// cidrRule reads {<cidrField>, except} (Cilium's CIDRRule, Kubernetes'
// IPBlock): the prefix is required and each exception must lie strictly
// inside it.
func (d *decoder) cidrRule(path string, v any, spec objectSpec, cidrField string) (CIDRRule, bool) {
	mark := len(d.errs)
	m, ok := d.object(path, v, spec)
	if !ok {
		return CIDRRule{}, false
	}
	var rule CIDRRule
	if _, hasCIDR := get(m, cidrField); !hasCIDR && hasAnyField(m, spec.unsupported) {
		// cidrGroupRef or cidrGroupSelector stands where cidr would, and
		// is already reported as not supported: cidr is not missing.
		return rule, false
	}
	if s, ok := d.requiredString(m, path, cidrField); ok {
		var err error
		if rule.Prefix, err = parsePrefix(s, false); err != nil {
			d.fail(field(path, cidrField), err)
		}
	}
	if !rule.Prefix.IsValid() {
		return rule, false
	}
	for i, item := range d.optionalList(path, m, "except") {
		p := index(field(path, "except"), i)
		s, ok := d.str(p, item)
		if !ok {
			continue
		}
		e, err := parsePrefix(s, false)
		if err == nil {
			err = checkExcept(rule.Prefix, e)
		}
		if err != nil {
			d.fail(p, err)
			continue
		}
		rule.Except = append(rule.Except, e)
	}
	return rule, !d.failed(mark)
}

// hasAnyField reports whether m has one of the fields keyed in fields.
func hasAnyField(m map[string]any, fields map[string]string) bool {
	for f := range fields {
		if _, ok := get(m, f); ok {
			return true
		}
	}
	return false
}

// optionalList returns the list in field name of m, or nil.
func (d *decoder) optionalList(path string, m map[string]any, name string) []any {
	v, ok := get(m, name)
	if !ok {
		return nil
	}
	l, _ := d.list(field(path, name), v)
	return l
}

// errMaxItems reports a list longer than Cilium allows.
func errMaxItems(max int) error { return fmt.Errorf("at most %d items are allowed", max) }
