package policy

import (
	"slices"

	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// Covers reports whether the peer rule e covers traffic with a peer
// labelled peer on port/proto, its port names resolved against named
// (ResolvingPorts: the subject's own ports for ingress, the peer's for
// egress): one of its peers selects the peer and one of its ports covers
// the port; a rule without ports or ICMP types covers every port. For
// ICMP and ICMPv6 port is the message type, which one of the rule's
// icmps of that family must be (as the datapath keys them). It is
// the rule evaluation behind trace and simulate --explain.
func Covers(e policyapi.PeerRule, named []policyapi.NamedPort, peer labels.Labels, port uint16, proto policyapi.Protocol) bool {
	if !slices.ContainsFunc(e.Peers, func(p policyapi.Peer) bool { return p.Kind == policyapi.PeerAny || p.Matches(peer) }) {
		return false
	}
	if e.IsL3Only() {
		return true
	}
	if family, ok := proto.ICMPFamily(); ok { // port is the ICMP type
		return slices.ContainsFunc(e.ICMPs, func(f policyapi.ICMPField) bool { return f.Family == family && uint16(f.Type) == port })
	}
	for _, pp := range e.Ports {
		for _, resolved := range pp.Resolve(named) {
			if resolved.Covers(port, proto) {
				return true
			}
		}
	}
	return false
}
