package loader_test

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/policy"
)

// runOut sends frame through prog and returns the verdict and the frame
// as the program left it.
func runOut(t *testing.T, prog *ebpf.Program, frame []byte) (uint32, []byte) {
	t.Helper()
	out := make([]byte, len(frame)+256)
	opts := &ebpf.RunOptions{Data: frame, DataOut: out}
	ret, err := prog.Run(opts)
	if err != nil {
		t.Fatalf("BPF_PROG_TEST_RUN: %v", err)
	}
	return ret, opts.DataOut
}

func (h *harness) lbWriter(t *testing.T) *lbmap.Writer {
	t.Helper()
	w, err := lbmap.OpenWriter(testLogger(), h.root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// lbCase is a service of one family and protocol with backends A (allowed
// by the endpoint's egress policy) and B (not).
type lbCase struct {
	name         string
	proto        uint8
	client, vip  netip.AddrPort
	backA, backB netip.AddrPort
}

var lbCases = []lbCase{
	{"IPv4 TCP", testpkt.ProtoTCP, netipAP("10.0.0.7:40000"), netipAP("10.96.0.10:80"), netipAP("10.0.1.1:8080"), netipAP("10.0.1.2:8080")},
	{"IPv4 UDP", testpkt.ProtoUDP, netipAP("10.0.0.7:40000"), netipAP("10.96.0.10:53"), netipAP("10.0.1.1:5353"), netipAP("10.0.1.2:5353")},
	{"IPv6 TCP", testpkt.ProtoTCP, netipAP("[fd00::7]:40000"), netipAP("[fd00:96::10]:80"), netipAP("[fd00::1:1]:8080"), netipAP("[fd00::1:2]:8080")},
	{"IPv6 UDP", testpkt.ProtoUDP, netipAP("[fd00::7]:40000"), netipAP("[fd00:96::10]:53"), netipAP("[fd00::1:1]:5353"), netipAP("[fd00::1:2]:5353")},
	// SCTP (the 5G core's N2: 38412), balanced to another port: the
	// CRC32c is updated for each port the translation changes.
	{"IPv4 SCTP", testpkt.ProtoSCTP, netipAP("10.0.0.7:40000"), netipAP("10.96.0.10:38412"), netipAP("10.0.1.1:38413"), netipAP("10.0.1.2:38413")},
	{"IPv6 SCTP", testpkt.ProtoSCTP, netipAP("[fd00::7]:40000"), netipAP("[fd00:96::10]:38412"), netipAP("[fd00::1:1]:38413"), netipAP("[fd00::1:2]:38413")},
}

func (c lbCase) service(backends ...netip.AddrPort) datapath.LBService {
	s := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: c.vip.Addr(), Port: c.vip.Port(), Proto: c.proto}, Name: "default/web"}
	for _, b := range backends {
		s.Backends = append(s.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: b.Addr(), Port: b.Port(), Proto: c.proto}})
	}
	return s
}

func (c lbCase) packet(sport uint16, flags uint8) testpkt.Packet {
	p := testpkt.Packet{Src: c.client.Addr(), Dst: c.vip.Addr(), Proto: c.proto, Sport: sport, Dport: c.vip.Port(), TCPFlags: flags, Payload: 11}
	if c.proto == testpkt.ProtoSCTP {
		p.Embedded, p.Payload = sctpChunk(int(sport)), 0
	}
	return p
}

// sctpChunk returns an SCTP DATA chunk of 1 to 1,400 bytes of data that
// vary with seed, padded to 4 bytes as SCTP pads chunks.
func sctpChunk(seed int) []byte {
	n := 1 + seed*7919%1400
	c := make([]byte, 16+n, 16+n+3)
	c[0], c[1] = 0, 3 // DATA, first and last fragment of a message
	binary.BigEndian.PutUint16(c[2:], uint16(16+n))
	binary.BigEndian.PutUint32(c[4:], uint32(seed)) // TSN
	for i := range n {
		c[16+i] = byte(seed*31 + i*7)
	}
	return append(c, make([]byte, (4-n%4)%4)...)
}

// TestServiceTranslation runs packets to a service through the programs:
// new flows are spread over the backends and DNATed with correct
// checksums, policy is judged against the chosen backend's identity, an
// established flow keeps its backend while the backend entry exists
// (even when the backend left the service), replies come from the
// frontend, a deleted backend's flow is balanced again, and a service
// without backends drops.
func TestServiceTranslation(t *testing.T) {
	for _, c := range lbCases {
		t.Run(c.name, func(t *testing.T) { serviceTranslation(t, c) })
	}
}

func serviceTranslation(t *testing.T, c lbCase) {
	h := newHarness(t)
	if err := h.ipcache.Upsert(netip.MustParsePrefix("fd00::1:2/128"), peerBID); err != nil {
		t.Fatal(err)
	}
	lb := h.lbWriter(t)
	progs := h.endpoint(t, policy.MapState{key(peerAID, policy.Egress, policy.Proto(c.proto), c.backA.Port(), 16): allow}, true)
	if err := lb.UpsertService(c.service(c.backA, c.backB)); err != nil {
		t.Fatal(err)
	}
	send := func(sport uint16, flags uint8) (uint32, netip.AddrPort) {
		t.Helper()
		ret, out := runOut(t, progs.FromContainer, withChecksums(c.packet(sport, flags).MustFrame()))
		if err := checkChecksums(out); err != nil {
			t.Fatalf("translated packet from port %d: %v", sport, err)
		}
		src, dst := frameTuple(out)
		if src != netip.AddrPortFrom(c.client.Addr(), sport) {
			t.Fatalf("translated packet has source %v, want the client's", src)
		}
		return ret, dst
	}
	hits := map[netip.AddrPort]int{}
	var sportA uint16
	for sport := uint16(40000); sport < 40064; sport++ {
		ret, dst := send(sport, 0)
		hits[dst]++
		switch {
		case dst == c.backA && ret == actOK:
			sportA = sport
		case dst == c.backB && ret == actShot:
		default:
			t.Fatalf("flow from port %d went to %v with verdict %d; want A %v allowed or B %v dropped by policy", sport, dst, ret, c.backA, c.backB)
		}
	}
	if hits[c.backA] == 0 || hits[c.backB] == 0 {
		t.Fatalf("64 new flows were balanced %v; want both backends chosen", hits)
	}

	// A leaves the service (terminating): its flow stays on it, new
	// flows go to B only.
	terminating := c.service(c.backB)
	terminating.Backends = append(terminating.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: c.backA.Addr(), Port: c.backA.Port(), Proto: c.proto}, State: datapath.BackendTerminating})
	if err := lb.UpsertService(terminating); err != nil {
		t.Fatal(err)
	}
	if ret, dst := send(sportA, testpkt.ACK); dst != c.backA || ret != actOK {
		t.Errorf("established flow went to %v (verdict %d) after its backend began terminating; want %v", dst, ret, c.backA)
	}
	for sport := uint16(41000); sport < 41016; sport++ {
		if _, dst := send(sport, 0); dst != c.backB {
			t.Fatalf("new flow went to %v, want only the active backend %v", dst, c.backB)
		}
	}

	// The backend's reply comes from the frontend.
	reply := testpkt.Packet{Src: c.backA.Addr(), Dst: c.client.Addr(), Proto: c.proto, Sport: c.backA.Port(), Dport: sportA, TCPFlags: testpkt.ACK, Payload: 5}
	if c.proto == testpkt.ProtoSCTP {
		reply.Embedded, reply.Payload = sctpChunk(int(sportA)+1), 0
	}
	ret, out := runOut(t, progs.ToContainer, withChecksums(reply.MustFrame()))
	if src, dst := frameTuple(out); ret != actOK || src != c.vip || dst != netip.AddrPortFrom(c.client.Addr(), sportA) {
		t.Errorf("reply passed as %v -> %v (verdict %d); want %v -> client", src, dst, ret, c.vip)
	}
	if err := checkChecksums(out); err != nil {
		t.Errorf("reverse-translated reply: %v", err)
	}

	// A is deleted: its flow is balanced again (to B, which policy denies).
	if err := lb.UpsertService(c.service(c.backB)); err != nil {
		t.Fatal(err)
	}
	if ret, dst := send(sportA, testpkt.ACK); dst != c.backB || ret != actShot {
		t.Errorf("flow of a deleted backend went to %v (verdict %d); want it balanced again to %v", dst, ret, c.backB)
	}

	// No backend: the service refuses the flow (TestServiceNoBackendReject),
	// reported as dropped for Cilium's reason.
	if err := lb.UpsertService(c.service()); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	if ret, _ := runOut(t, progs.FromContainer, withChecksums(c.packet(42000, 0).MustFrame())); ret != actRedirect {
		t.Errorf("flow to a service without backends: verdict %d, want its refusal sent back (%d)", ret, actRedirect)
	}
	evs := h.drain(t)
	if len(evs) == 0 || evs[len(evs)-1].Type != eventsmap.TypeDrop || evs[len(evs)-1].Reason != eventsmap.ReasonNoService {
		t.Errorf("events %+v, want a drop with reason %v", evs, eventsmap.ReasonNoService)
	}
}

// TestServiceSessionAffinity checks ClientIP affinity: every new flow of a
// client goes to the backend its first went to, until the backend leaves
// the service.
func TestServiceSessionAffinity(t *testing.T) {
	h := newHarness(t)
	lb := h.lbWriter(t)
	c := lbCases[0]
	progs := h.endpoint(t, policy.MapState{key(0, policy.Egress, policy.ProtoTCP, 8080, 16): allow}, true)
	svc := c.service(c.backA, c.backB)
	svc.SessionAffinityTimeout = time.Hour
	if err := lb.UpsertService(svc); err != nil {
		t.Fatal(err)
	}
	_, out := runOut(t, progs.FromContainer, withChecksums(c.packet(40000, 0).MustFrame()))
	_, first := frameTuple(out)
	for sport := uint16(40001); sport < 40033; sport++ {
		if _, out := runOut(t, progs.FromContainer, withChecksums(c.packet(sport, 0).MustFrame())); func() netip.AddrPort { _, d := frameTuple(out); return d }() != first {
			t.Fatalf("flow from port %d left the affinity backend %v", sport, first)
		}
	}
	other := c.backA
	if first == c.backA {
		other = c.backB
	}
	svc.Backends = c.service(other).Backends
	if err := lb.UpsertService(svc); err != nil {
		t.Fatal(err)
	}
	if _, out := runOut(t, progs.FromContainer, withChecksums(c.packet(40100, 0).MustFrame())); func() netip.AddrPort { _, d := frameTuple(out); return d }() != other {
		t.Errorf("after the affinity backend left, a new flow went elsewhere than %v", other)
	}
}

// TestServiceICMPErrorFromFrontend: an ICMP error a backend sends about a
// translated flow reaches the client as from the frontend, about a packet
// to the frontend, with every checksum right; both families, UDP and
// SCTP (whose path MTU discovery needs the errors).
func TestServiceICMPErrorFromFrontend(t *testing.T) {
	for _, c := range []lbCase{lbCases[1], lbCases[3], lbCases[4], lbCases[5]} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			lb := h.lbWriter(t)
			progs := h.endpoint(t, policy.MapState{key(0, policy.Egress, policy.Proto(c.proto), c.backA.Port(), 16): allow}, true)
			if err := lb.UpsertService(c.service(c.backA)); err != nil {
				t.Fatal(err)
			}
			if ret, _ := runOut(t, progs.FromContainer, withChecksums(c.packet(40000, 0).MustFrame())); ret != actOK {
				t.Fatalf("flow to the service: verdict %d", ret)
			}
			about := testpkt.Packet{Src: c.client.Addr(), Dst: c.backA.Addr(), Proto: c.proto, Sport: 40000, Dport: c.backA.Port(), Payload: 11}
			typ, code := uint8(3), uint8(3) // port unreachable
			if c.client.Addr().Is6() {
				typ, code = 1, 4
			}
			icmpErr, err := testpkt.ICMPError(c.backA.Addr(), c.client.Addr(), typ, code, about)
			if err != nil {
				t.Fatal(err)
			}
			ret, out := runOut(t, progs.ToContainer, withICMPChecksums(icmpErr.MustFrame()))
			if ret != actOK {
				t.Fatalf("ICMP error: verdict %d, want pass", ret)
			}
			if src, innerDst := icmpTuple(out); src != c.vip.Addr() || innerDst != c.vip {
				t.Errorf("ICMP error from %v about a packet to %v; want from %v about one to %v", src, innerDst, c.vip.Addr(), c.vip)
			}
			if err := checkICMPChecksums(out); err != nil {
				t.Error(err)
			}
		})
	}
}
