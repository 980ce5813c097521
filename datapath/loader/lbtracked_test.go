package loader_test

import (
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/datapath/loader/testpkt"
)

// TestServiceAfterTrackedFlow: from_container looks a packet up in
// conntrack before the services. A flow to an address that becomes a
// service frontend while the flow is tracked goes to a backend from its
// next packet while nothing ever answered it (a client retrying before
// its service was written), and keeps going to the address once it was
// answered (a connection to a real host stays where it is). The
// endpoint's replies to a flow opened from a frontend's address and port
// are never translated.
func TestServiceAfterTrackedFlow(t *testing.T) {
	for _, c := range []lbCase{lbCases[0], lbCases[1], lbCases[2]} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			lb := h.lbWriter(t)
			progs := h.endpoint(t, nil, false)
			open := uint8(0)
			if c.proto == testpkt.ProtoTCP {
				open = testpkt.SYN
			}
			send := func(sport uint16, flags uint8) netip.AddrPort {
				t.Helper()
				ret, out := runOut(t, progs.FromContainer, withChecksums(c.packet(sport, flags).MustFrame()))
				if ret != actOK {
					t.Fatalf("packet from port %d: verdict %d, want pass", sport, ret)
				}
				_, dst := frameTuple(out)
				return dst
			}
			// Two flows to the address before it is a frontend; the
			// second is answered.
			if dst := send(40000, open); dst != c.vip {
				t.Fatalf("flow to %v before its service went to %v", c.vip, dst)
			}
			if dst := send(40001, open); dst != c.vip {
				t.Fatalf("flow to %v before its service went to %v", c.vip, dst)
			}
			answer := testpkt.Packet{Src: c.vip.Addr(), Dst: c.client.Addr(), Proto: c.proto, Sport: c.vip.Port(), Dport: 40001, Payload: 5}
			if c.proto == testpkt.ProtoTCP {
				answer.TCPFlags = testpkt.SYN | testpkt.ACK
			}
			if ret := run(t, progs.ToContainer, answer); ret != actOK {
				t.Fatalf("answer: verdict %d, want pass", ret)
			}
			// A peer at the frontend's address and port opens a flow to the
			// endpoint (a host process whose source port is a NodePort).
			in := testpkt.Packet{Src: c.vip.Addr(), Dst: c.client.Addr(), Proto: c.proto, Sport: c.vip.Port(), Dport: 8000, TCPFlags: open, Payload: 5}
			if ret := run(t, progs.ToContainer, in); ret != actOK {
				t.Fatalf("flow from the frontend's address: verdict %d, want pass", ret)
			}

			if err := lb.UpsertService(c.service(c.backA)); err != nil {
				t.Fatal(err)
			}
			if dst := send(40000, open); dst != c.backA {
				t.Errorf("unanswered flow retried after its address became a frontend went to %v, want the backend %v", dst, c.backA)
			}
			if dst := send(40001, testpkt.ACK); dst != c.vip {
				t.Errorf("answered flow went to %v after its address became a frontend, want it kept on %v", dst, c.vip)
			}
			reply := testpkt.Packet{Src: c.client.Addr(), Dst: c.vip.Addr(), Proto: c.proto, Sport: 8000, Dport: c.vip.Port(), TCPFlags: testpkt.ACK, Payload: 5}
			ret, out := runOut(t, progs.FromContainer, withChecksums(reply.MustFrame()))
			if _, dst := frameTuple(out); ret != actOK || dst != c.vip {
				t.Errorf("the endpoint's reply to %v went to %v (verdict %d), want it untranslated", c.vip, dst, ret)
			}
			if dst := send(40002, open); dst != c.backA {
				t.Errorf("new flow to the frontend went to %v, want the backend %v", dst, c.backA)
			}
		})
	}
}
