package loader_test

import (
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

func icmpError(t *testing.T, src, dst string, typ, code uint8, about testpkt.Packet) testpkt.Packet {
	t.Helper()
	p, err := testpkt.ICMPError(netip.MustParseAddr(src), netip.MustParseAddr(dst), typ, code, about)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestICMPErrorsOfTrackedFlows checks that ICMP errors about a tracked
// flow pass as related (path MTU discovery works under default deny),
// whichever side the embedded packet came from, and that errors about
// unknown flows are decided by policy like any new ICMP message.
func TestICMPErrorsOfTrackedFlows(t *testing.T) {
	h := newHarness(t)
	progs := h.endpoint(t, policy.MapState{
		key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16):   allow,
		key(peerAID, policy.Egress, policy.ProtoTCP, 443, 16):  allow,
		key(peerAID, policy.Ingress, policy.ProtoUDP, 53, 16):  allow,
		key(peerAID, policy.Egress, policy.ProtoTCP, 8080, 16): allow,
	}, true)
	out := tcp("10.0.0.7", "10.0.1.1", 40000, 80)
	out6 := tcp("fd00::7", "fd00::1:1", 40000, 443)
	in := udp("10.0.1.1", "10.0.0.7", 5353, 53)
	steps := []step{
		egressStep(out, peerAID, true, eventsmap.MatchL3L4, fwd),
		egressStep(out6, peerAID, true, eventsmap.MatchL3L4, fwd),
		ingressStep(in, peerAID, true, eventsmap.MatchL3L4, fwd),
		// a router says the egress flow's packets are too big: related, passes
		quiet(false, icmpError(t, "192.0.2.1", "10.0.0.7", 3, 4, out)),
		quiet(false, icmpError(t, "2001:db8::1", "fd00::7", 2, 0, out6)),
		// the endpoint reports its port unreachable to a peer's ingress flow: related
		quiet(true, icmpError(t, "10.0.0.7", "10.0.1.1", 3, 3, in)),
		// the peer reports the endpoint's reply unreachable: related (reverse of the ingress flow)
		quiet(false, icmpError(t, "10.0.1.1", "10.0.0.7", 3, 3, in.Reply())),
	}
	// an error about a flow never seen is a new ICMP message: denied by policy
	unknown := icmpError(t, "192.0.2.1", "10.0.0.7", 3, 4, tcp("10.0.0.7", "10.0.1.1", 40000, 8080))
	steps = append(steps, ingressStep(unknown, identity.ReservedWorldIPv4, false, eventsmap.MatchNone, noPolicy))
	h.drain(t)
	for i, s := range steps {
		prog := progs.ToContainer
		if s.egress {
			prog = progs.FromContainer
		}
		ret := run(t, prog, s.pkt)
		if want := map[bool]uint32{true: actOK, false: actShot}[s.pass]; ret != want {
			t.Errorf("step %d (%v -> %v type %d): verdict %d, want %d", i, s.pkt.Src, s.pkt.Dst, s.pkt.ICMPType, ret, want)
		}
		checkEvents(t, i, h.drain(t), s.events)
	}
}
