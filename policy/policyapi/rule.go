package policyapi

import (
	"encoding/json"

	"github.com/apiary-net/apiary/policy/labels"
)

// Rule is one translated, validated rule: what it applies to, what it
// allows and denies in each direction, and whether it puts its subjects
// in default deny. A CiliumNetworkPolicy gives one Rule per spec/specs
// entry; a NetworkPolicy gives one Rule.
type Rule struct {
	// Field is where the rule came from in its document: "spec",
	// "specs[1]".
	Field string `json:"field"`
	// Subject is the set of local endpoints (or nodes) the rule applies to.
	Subject Subject `json:"subject"`
	// Ingress allows traffic from peers to the subject.
	Ingress []PeerRule `json:"ingress,omitempty"`
	// IngressDeny denies traffic from peers; deny wins over allow.
	IngressDeny []PeerRule `json:"ingressDeny,omitempty"`
	// Egress allows traffic from the subject to peers.
	Egress []PeerRule `json:"egress,omitempty"`
	// EgressDeny denies traffic to peers; deny wins over allow.
	EgressDeny []PeerRule `json:"egressDeny,omitempty"`
	// DefaultDeny says in which directions the rule puts its subjects in
	// default deny, where only allowed traffic passes.
	DefaultDeny DefaultDeny `json:"defaultDeny"`
	// Labels are the origin labels of the policy
	// (k8s:io.cilium.k8s.policy.name, ...namespace, ...uid,
	// ...derived-from) plus the rule's own spec.labels.
	Labels labels.Labels `json:"labels"`
	// Description is the rule's free-form description.
	Description string `json:"description,omitempty"`
}

// DefaultDeny says in which directions a rule puts the endpoints it
// selects in default deny. An endpoint is in default deny in a direction
// when any rule selecting it says so; otherwise all its traffic in that
// direction passes unless denied.
//
// For Cilium rules a direction is on when the rule has allow or deny
// entries in it, unless spec.enableDefaultDeny turns it off (then the
// rule only adds allows to endpoints other policies isolate) or on. For
// NetworkPolicy it follows policyTypes.
type DefaultDeny struct {
	Ingress bool `json:"ingress"`
	Egress  bool `json:"egress"`
}

// SubjectKind says whether a rule applies to endpoints or to nodes.
type SubjectKind string

// Subject kinds.
const (
	// SubjectEndpoints: the rule applies to the local endpoints its
	// selector matches, never to the host endpoint.
	SubjectEndpoints SubjectKind = "endpoints"
	// SubjectNodes: the rule (a clusterwide nodeSelector rule, a host
	// policy) applies to the host endpoint when the node's labels match.
	SubjectNodes SubjectKind = "nodes"
)

// Subject is what a rule applies to.
type Subject struct {
	Kind SubjectKind `json:"kind"`
	// Selector is the selector from the document, with the policy
	// namespace added for namespaced policies.
	Selector EndpointSelector `json:"selector"`
}

// Selects reports whether the rule applies to a local endpoint with
// labels ls: endpoint rules select non-host endpoints, node rules the
// host endpoint (reserved:host), each by Selector.
func (s Subject) Selects(ls labels.Labels) bool {
	isHost := ls.Has(labels.New(labels.SourceReserved, "host", ""))
	if isHost != (s.Kind == SubjectNodes) {
		return false
	}
	return s.Selector.Matches(ls)
}

// PeerRule is one entry of ingress, ingressDeny, egress or egressDeny:
// traffic with any of Peers, on any of Ports or ICMPs.
type PeerRule struct {
	// Field is where the entry came from: "ingress[0]".
	Field string `json:"field"`
	// Peers are the L3 peers. An empty list matches no peer (a rule
	// written "- {}" in a CiliumNetworkPolicy, or with an explicitly
	// empty peer list): the entry then allows or denies nothing, though
	// it still counts for DefaultDeny. "Any peer" is an explicit PeerAny.
	Peers []Peer `json:"peers"`
	// Ports are the L4 ports. With neither Ports nor ICMPs the entry
	// covers all traffic with its peers, every protocol included.
	Ports []PortProtocol `json:"ports,omitempty"`
	// ICMPs are ICMP message types; a rule has Ports or ICMPs, not both.
	ICMPs []ICMPField `json:"icmps,omitempty"`
}

// IsL3Only reports whether the entry covers all traffic with its peers.
func (r PeerRule) IsL3Only() bool { return len(r.Ports) == 0 && len(r.ICMPs) == 0 }

// PeerKind says what a Peer was written as.
type PeerKind string

// Peer kinds.
const (
	// PeerEndpoints: an endpoint selector (fromEndpoints/toEndpoints, or
	// a NetworkPolicy podSelector/namespaceSelector peer).
	PeerEndpoints PeerKind = "endpoints"
	// PeerEntity: one selector of an entity (fromEntities/toEntities).
	PeerEntity PeerKind = "entity"
	// PeerCIDR: a CIDR peer (fromCIDR, fromCIDRSet, ipBlock).
	PeerCIDR PeerKind = "cidr"
	// PeerAny: every peer (a NetworkPolicy rule without from/to, a
	// Cilium rule with ports but no peers).
	PeerAny PeerKind = "any"
)

// Peer is one L3 peer of a PeerRule.
type Peer struct {
	// Field is where the peer came from: "fromEndpoints[1]",
	// "toEntities[0]", "from[2]"; empty for PeerAny.
	Field string   `json:"field,omitempty"`
	Kind  PeerKind `json:"kind"`
	// Entity is the entity of a PeerEntity peer.
	Entity Entity `json:"entity,omitempty"`
	// Selector selects the peer's identities, for every kind but
	// PeerCIDR; empty for PeerAny and the entity all.
	Selector *EndpointSelector `json:"selector,omitempty"`
	// CIDR is the network of a PeerCIDR peer.
	CIDR *CIDRRule `json:"cidr,omitempty"`
}

// Matches reports whether an identity with labels ls is this peer.
func (p Peer) Matches(ls labels.Labels) bool {
	switch {
	case p.CIDR != nil:
		return p.CIDR.Matches(ls)
	case p.Selector != nil:
		return p.Selector.Matches(ls)
	}
	return false
}

// MarshalJSON writes the rule with its labels as strings
// ("k8s:io.cilium.k8s.policy.name=allow-db"), for dumps and the API.
func (r Rule) MarshalJSON() ([]byte, error) {
	type plain Rule
	return json.Marshal(struct {
		plain
		Labels []string `json:"labels"`
	}{plain(r), labelStrings(r.Labels)})
}

func labelStrings(ls labels.Labels) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
	}
	return out
}
