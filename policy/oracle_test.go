package policy_test

import (
	"slices"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// The oracle decides a packet straight from the rules, the way
// docs/policy.md words the semantics, without map state: a deny entry
// covering the packet wins; else an allow entry covering it allows it;
// else it passes only when no selecting rule puts the direction in
// default deny. A port name in an ingress rule is a port of the subject
// (subjectPorts); in an egress rule, a port of the destination: any of
// the numbers the endpoints of the peer's identity give it (peerPorts).

var oracleProtos = map[policy.Proto]policyapi.Protocol{policy.ProtoTCP: policyapi.ProtoTCP, policy.ProtoUDP: policyapi.ProtoUDP, policy.ProtoSCTP: policyapi.ProtoSCTP}

func oracleVerdict(rules []*policyapi.Rule, subject labels.Labels, subjectPorts []policyapi.NamedPort, peer labels.Labels, peerPorts []policyapi.NamedPort, p packet) bool {
	named := subjectPorts
	if p.dir == policy.Egress {
		named = peerPorts
	}
	defaultDeny, allowed := false, false
	for _, r := range rules {
		if !r.Subject.Selects(subject) {
			continue
		}
		allow, deny := r.Ingress, r.IngressDeny
		if p.dir == policy.Egress {
			allow, deny = r.Egress, r.EgressDeny
			defaultDeny = defaultDeny || r.DefaultDeny.Egress
		} else {
			defaultDeny = defaultDeny || r.DefaultDeny.Ingress
		}
		if slices.ContainsFunc(deny, func(pr policyapi.PeerRule) bool { return oracleCovers(pr, named, peer, p) }) {
			return false
		}
		allowed = allowed || slices.ContainsFunc(allow, func(pr policyapi.PeerRule) bool { return oracleCovers(pr, named, peer, p) })
	}
	return allowed || !defaultDeny
}

func oracleCovers(pr policyapi.PeerRule, named []policyapi.NamedPort, peer labels.Labels, p packet) bool {
	if !slices.ContainsFunc(pr.Peers, func(x policyapi.Peer) bool { return x.Kind == policyapi.PeerAny || x.Matches(peer) }) {
		return false
	}
	if pr.IsL3Only() {
		return true
	}
	for _, pp := range pr.Ports {
		for _, resolved := range pp.Resolve(named) {
			if proto, ok := oracleProtos[p.proto]; ok && resolved.Covers(p.port, proto) {
				return true
			}
		}
	}
	for _, icmp := range pr.ICMPs {
		want := policy.ProtoICMP
		if icmp.Family == policyapi.ICMPv6 {
			want = policy.ProtoICMPv6
		}
		if p.proto == want && p.port == uint16(icmp.Type) {
			return true
		}
	}
	return false
}

// randomPacket returns a packet with a known identity on ports the
// random rules talk about.
func (w *propWorld) randomPacket(peers []*identity.Identity) (packet, labels.Labels) {
	peer := peers[w.rnd.Intn(len(peers))]
	p := packet{peer: peer.ID, dir: policy.Direction(w.rnd.Intn(2))}
	switch w.rnd.Intn(4) {
	case 0:
		p.proto, p.port = policy.ProtoICMP, []uint16{0, 8}[w.rnd.Intn(2)]
	case 1:
		p.proto, p.port = policy.ProtoUDP, []uint16{53, 8050, 80}[w.rnd.Intn(3)]
	default:
		p.proto = []policy.Proto{policy.ProtoTCP, policy.ProtoSCTP}[w.rnd.Intn(2)]
		p.port = []uint16{80, 81, 7999, 8000, 8080, 8100, 8101, 53}[w.rnd.Intn(8)]
	}
	return p, peer.Labels
}
