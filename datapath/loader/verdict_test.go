package loader_test

import (
	"testing"

	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// A step sends one packet through from_container (the endpoint's egress)
// or to_container (its ingress) and checks the verdict and the events.
type step struct {
	egress bool
	pkt    testpkt.Packet
	pass   bool
	events []eventsmap.Event
}

func key(id identity.NumericIdentity, dir policy.Direction, proto policy.Proto, port uint16, plen uint8) policy.Key {
	return policy.Key{Identity: id, Direction: dir, Proto: proto, Port: port, PrefixLen: plen}
}

var (
	allow = policy.Entry{}
	deny  = policy.Entry{Deny: true}
)

func tcp(src, dst string, sport, dport uint16) testpkt.Packet {
	return testpkt.Packet{Src: addr(src), Dst: addr(dst), Proto: testpkt.ProtoTCP, Sport: sport, Dport: dport}
}

func udp(src, dst string, sport, dport uint16) testpkt.Packet {
	p := tcp(src, dst, sport, dport)
	p.Proto = testpkt.ProtoUDP
	return p
}

func icmp(src, dst string, proto, typ uint8, id uint16) testpkt.Packet {
	return testpkt.Packet{Src: addr(src), Dst: addr(dst), Proto: proto, ICMPType: typ, ICMPID: id}
}

// egressStep and ingressStep build steps with the events of a new flow:
// a verdict, and a drop when denied.
func egressStep(p testpkt.Packet, peer identity.NumericIdentity, pass bool, match eventsmap.MatchType, reason eventsmap.Reason) step {
	evs := []eventsmap.Event{verdictEvent(p, policy.Egress, peer, pass, match, reason)}
	if !pass {
		evs = append(evs, dropEvent(p, policy.Egress, peer, reason))
	}
	return step{egress: true, pkt: p, pass: pass, events: evs}
}

func ingressStep(p testpkt.Packet, peer identity.NumericIdentity, pass bool, match eventsmap.MatchType, reason eventsmap.Reason) step {
	evs := []eventsmap.Event{verdictEvent(p, policy.Ingress, peer, pass, match, reason)}
	if !pass {
		evs = append(evs, dropEvent(p, policy.Ingress, peer, reason))
	}
	return step{pkt: p, pass: pass, events: evs}
}

// quiet is a step of an established flow: no event.
func quiet(egress bool, p testpkt.Packet) step { return step{egress: egress, pkt: p, pass: true} }

const (
	fwd      = eventsmap.ReasonForwarded
	noPolicy = eventsmap.ReasonPolicy
	denied   = eventsmap.ReasonPolicyDenied
)

func TestVerdicts(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name      string
		state     policy.MapState
		noEnforce bool
		steps     []step
	}{
		{
			name:  "L3 allow",
			state: policy.MapState{key(peerAID, policy.Egress, 0, 0, 0): allow},
			steps: []step{
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 80), peerAID, true, eventsmap.MatchL3Only, fwd),
				egressStep(udp("10.0.0.7", "10.0.1.1", 40000, 53), peerAID, true, eventsmap.MatchL3Only, fwd),
				egressStep(tcp("10.0.0.7", "10.0.1.2", 40000, 80), peerBID, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name:  "L4 allow",
			state: policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow},
			steps: []step{
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 80), peerAID, true, eventsmap.MatchL3L4, fwd),
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 81), peerAID, false, eventsmap.MatchNone, noPolicy),
				egressStep(udp("10.0.0.7", "10.0.1.1", 40000, 80), peerAID, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name:  "port range 8080-8087",
			state: policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 8080, 13): allow},
			steps: []step{
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 8080), peerAID, true, eventsmap.MatchL3L4, fwd),
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 8087), peerAID, true, eventsmap.MatchL3L4, fwd),
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 8088), peerAID, false, eventsmap.MatchNone, noPolicy),
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 8079), peerAID, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name: "deny beats a broader allow",
			state: policy.MapState{
				key(peerAID, policy.Egress, 0, 0, 0):                 allow,
				key(peerAID, policy.Egress, policy.ProtoTCP, 22, 16): deny,
			},
			steps: []step{
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 22), peerAID, false, eventsmap.MatchL3L4, denied),
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 80), peerAID, true, eventsmap.MatchL3Only, fwd),
			},
		},
		{
			name: "a broader deny beats a narrower allow",
			state: policy.MapState{
				key(0, policy.Egress, policy.ProtoTCP, 0, 0):         deny,
				key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow,
				key(peerAID, policy.Egress, policy.ProtoUDP, 53, 16): allow,
			},
			steps: []step{
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 80), peerAID, false, eventsmap.MatchL3L4, denied),
				egressStep(udp("10.0.0.7", "10.0.1.1", 40000, 53), peerAID, true, eventsmap.MatchL3L4, fwd),
			},
		},
		{
			name: "a broader deny of the same peer beats a narrower allow",
			state: policy.MapState{
				key(peerAID, policy.Egress, policy.ProtoTCP, 0, 0):   deny,
				key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow,
				key(0, policy.Egress, policy.ProtoUDP, 5000, 8):      deny,
				key(0, policy.Egress, policy.ProtoUDP, 5003, 16):     allow,
			},
			steps: []step{
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 80), peerAID, false, eventsmap.MatchL3L4, denied),
				egressStep(udp("10.0.0.7", "10.0.1.2", 40000, 5003), peerBID, false, eventsmap.MatchL4Only, denied),
			},
		},
		{
			name:  "default deny",
			state: policy.MapState{},
			steps: []step{
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 80), peerAID, false, eventsmap.MatchNone, noPolicy),
				ingressStep(tcp("10.0.1.1", "10.0.0.7", 40000, 80), peerAID, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name:      "no enforcement lets new flows through without a verdict",
			state:     policy.MapState{},
			noEnforce: true,
			steps: []step{
				quiet(true, tcp("10.0.0.7", "10.0.1.1", 40000, 80)),
				quiet(false, tcp("10.0.1.1", "10.0.0.7", 40000, 80)),
			},
		},
		{
			name: "any-identity rules",
			state: policy.MapState{
				key(0, policy.Ingress, policy.ProtoTCP, 443, 16): allow,
				key(0, policy.Egress, 0, 0, 0):                   allow,
			},
			steps: []step{
				ingressStep(tcp("10.0.1.2", "10.0.0.7", 40000, 443), peerBID, true, eventsmap.MatchL4Only, fwd),
				ingressStep(tcp("10.0.1.2", "10.0.0.7", 40000, 444), peerBID, false, eventsmap.MatchNone, noPolicy),
				egressStep(udp("10.0.0.7", "192.0.2.1", 40000, 53), identity.ReservedWorldIPv4, true, eventsmap.MatchAll, fwd),
			},
		},
		{
			name:  "unknown IPv4 peer is world-ipv4",
			state: policy.MapState{key(identity.ReservedWorldIPv4, policy.Egress, policy.ProtoTCP, 443, 16): allow},
			steps: []step{
				egressStep(tcp("10.0.0.7", "192.0.2.1", 40000, 443), identity.ReservedWorldIPv4, true, eventsmap.MatchL3L4, fwd),
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 443), peerAID, false, eventsmap.MatchNone, noPolicy),
				egressStep(tcp("fd00::7", "2001:db8::1", 40000, 443), identity.ReservedWorldIPv6, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name:  "unknown IPv6 peer is world-ipv6",
			state: policy.MapState{key(identity.ReservedWorldIPv6, policy.Egress, policy.ProtoTCP, 443, 16): allow},
			steps: []step{
				egressStep(tcp("fd00::7", "2001:db8::1", 40000, 443), identity.ReservedWorldIPv6, true, eventsmap.MatchL3L4, fwd),
				egressStep(tcp("fd00::7", "fd00::1:1", 40000, 443), peerAID, false, eventsmap.MatchNone, noPolicy),
				egressStep(tcp("10.0.0.7", "192.0.2.1", 40000, 443), identity.ReservedWorldIPv4, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name:  "reserved:world (2) is never a miss's identity",
			state: policy.MapState{key(identity.ReservedWorld, policy.Egress, policy.ProtoTCP, 443, 16): allow},
			steps: []step{
				egressStep(tcp("10.0.0.7", "192.0.2.1", 40000, 443), identity.ReservedWorldIPv4, false, eventsmap.MatchNone, noPolicy),
				egressStep(tcp("fd00::7", "2001:db8::1", 40000, 443), identity.ReservedWorldIPv6, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name:  "CT: replies and established packets pass though ingress denies",
			state: policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow},
			steps: []step{
				egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 80), peerAID, true, eventsmap.MatchL3L4, fwd),
				quiet(false, tcp("10.0.0.7", "10.0.1.1", 40000, 80).Reply()),
				quiet(true, withFlags(tcp("10.0.0.7", "10.0.1.1", 40000, 80), testpkt.ACK)),
				// the same peer opening its own flow to the endpoint is new, and denied
				ingressStep(tcp("10.0.1.1", "10.0.0.7", 80, 40001), peerAID, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name: "ICMP echo by type, replies through conntrack",
			state: policy.MapState{
				key(peerAID, policy.Egress, policy.ProtoICMP, 8, 16): allow,
			},
			steps: []step{
				egressStep(icmp("10.0.0.7", "10.0.1.1", testpkt.ProtoICMP, 8, 77), peerAID, true, eventsmap.MatchL3L4, fwd),
				quiet(false, icmp("10.0.0.7", "10.0.1.1", testpkt.ProtoICMP, 8, 77).Reply()),
				egressStep(icmp("10.0.0.7", "10.0.1.1", testpkt.ProtoICMP, 13, 0), peerAID, false, eventsmap.MatchNone, noPolicy),
				ingressStep(icmp("10.0.1.1", "10.0.0.7", testpkt.ProtoICMP, 8, 78), peerAID, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name: "IPv6 TCP and ICMPv6; neighbour discovery passes",
			state: policy.MapState{
				key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16):     allow,
				key(peerAID, policy.Egress, policy.ProtoICMPv6, 128, 16): allow,
			},
			steps: []step{
				egressStep(tcp("fd00::7", "fd00::1:1", 40000, 80), peerAID, true, eventsmap.MatchL3L4, fwd),
				quiet(false, tcp("fd00::7", "fd00::1:1", 40000, 80).Reply()),
				egressStep(udp("fd00::7", "fd00::1:1", 40000, 80), peerAID, false, eventsmap.MatchNone, noPolicy),
				egressStep(icmp("fd00::7", "fd00::1:1", testpkt.ProtoICMPv6, 128, 9), peerAID, true, eventsmap.MatchL3L4, fwd),
				quiet(false, icmp("fd00::7", "fd00::1:1", testpkt.ProtoICMPv6, 128, 9).Reply()),
				quiet(true, icmp("fd00::7", "fd00::1:1", testpkt.ProtoICMPv6, 135, 0)),
			},
		},
		{
			name: "IPv6 extension headers are skipped; later fragments match only rules without ports",
			state: policy.MapState{
				key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow,
				key(peerBID, policy.Egress, policy.ProtoUDP, 0, 0):   allow,
			},
			steps: []step{
				egressStep(hopByHop(tcp("fd00::7", "fd00::1:1", 40000, 80)), peerAID, true, eventsmap.MatchL3L4, fwd),
				egressStep(fragment(tcp("10.0.0.7", "10.0.1.1", 40001, 80)), peerAID, false, eventsmap.MatchNone, noPolicy),
				egressStep(fragment(udp("10.0.0.7", "10.0.1.2", 40000, 53)), peerBID, true, eventsmap.MatchL3L4, fwd),
				egressStep(hopByHop(fragment(tcp("fd00::7", "fd00::1:1", 40002, 80))), peerAID, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name: "later fragments take the first fragment's ports",
			state: policy.MapState{
				key(peerAID, policy.Egress, policy.ProtoUDP, 53, 16): allow,
			},
			steps: []step{
				egressStep(firstFragment(udp("10.0.0.7", "10.0.1.1", 40000, 53), 7), peerAID, true, eventsmap.MatchL3L4, fwd),
				quiet(true, laterFragment(udp("10.0.0.7", "10.0.1.1", 40000, 53), 7)),
				egressStep(firstFragment(udp("fd00::7", "fd00::1:1", 40000, 53), 70000), peerAID, true, eventsmap.MatchL3L4, fwd),
				quiet(true, laterFragment(udp("fd00::7", "fd00::1:1", 40000, 53), 70000)),
				// a later fragment of another id: no ports, no policy entry
				egressStep(laterFragment(udp("10.0.0.7", "10.0.1.1", 40000, 53), 8), peerAID, false, eventsmap.MatchNone, noPolicy),
			},
		},
		{
			name: "UDP and SCTP ports",
			state: policy.MapState{
				key(peerAID, policy.Egress, policy.ProtoUDP, 53, 16): allow,
				key(peerAID, policy.Egress, policy.ProtoSCTP, 9, 16): allow,
			},
			steps: []step{
				egressStep(udp("10.0.0.7", "10.0.1.1", 40000, 53), peerAID, true, eventsmap.MatchL3L4, fwd),
				quiet(false, udp("10.0.0.7", "10.0.1.1", 40000, 53).Reply()),
				egressStep(sctp("10.0.0.7", "10.0.1.1", 40000, 9), peerAID, true, eventsmap.MatchL3L4, fwd),
				egressStep(sctp("10.0.0.7", "10.0.1.1", 40000, 10), peerAID, false, eventsmap.MatchNone, noPolicy),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := h.ct.Flush(); err != nil {
				t.Fatal(err)
			}
			progs := h.endpoint(t, tt.state, !tt.noEnforce)
			h.drain(t)
			for i, s := range tt.steps {
				prog := progs.ToContainer
				if s.egress {
					prog = progs.FromContainer
				}
				ret := run(t, prog, s.pkt)
				if want := map[bool]uint32{true: actOK, false: actShot}[s.pass]; ret != want {
					t.Errorf("step %d (%+v): verdict %d, want %d", i, s.pkt, ret, want)
				}
				checkEvents(t, i, h.drain(t), s.events)
			}
		})
	}
}

func checkEvents(t *testing.T, step int, got, want []eventsmap.Event) {
	t.Helper()
	for i := range got {
		got[i].Len = 0
	}
	if len(got) != len(want) {
		t.Errorf("step %d: %d events %+v, want %d %+v", step, len(got), got, len(want), want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("step %d event %d:\n got %+v\nwant %+v", step, i, got[i], want[i])
		}
	}
}

func withFlags(p testpkt.Packet, flags uint8) testpkt.Packet {
	p.TCPFlags = flags
	return p
}

func sctp(src, dst string, sport, dport uint16) testpkt.Packet {
	p := tcp(src, dst, sport, dport)
	p.Proto = testpkt.ProtoSCTP
	return p
}

func hopByHop(p testpkt.Packet) testpkt.Packet {
	p.HopByHop = true
	return p
}

// fragment makes p a later fragment; the programs see no ports in it.
func fragment(p testpkt.Packet) testpkt.Packet {
	p.FragOffset = 185
	return p
}

func firstFragment(p testpkt.Packet, id uint32) testpkt.Packet {
	p.MoreFragments, p.FragID = true, id
	return p
}

func laterFragment(p testpkt.Packet, id uint32) testpkt.Packet {
	p.FragOffset, p.FragID = 185, id
	return p
}
