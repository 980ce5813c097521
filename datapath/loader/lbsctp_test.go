package loader_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/policy"
)

// SCTP without an SCTP stack: this kernel (and CI's) has none, so the
// test's endpoints speak SCTP through raw sockets of protocol 132. A
// packet is the common header and one DATA chunk; the receiver checks
// the CRC32c as an SCTP stack would.

// sctpPacket returns an SCTP packet from sport to dport whose DATA chunk
// carries data, with its CRC32c.
func sctpPacket(sport, dport uint16, data []byte) []byte {
	p := make([]byte, 12, 12+16+len(data)+3)
	binary.BigEndian.PutUint16(p[0:], sport)
	binary.BigEndian.PutUint16(p[2:], dport)
	binary.BigEndian.PutUint32(p[4:], 0x5c7b) // verification tag
	chunk := make([]byte, 16, 16+len(data))
	chunk[1] = 3 // first and last fragment of a message
	binary.BigEndian.PutUint16(chunk[2:], uint16(16+len(data)))
	p = append(append(p, chunk...), data...)
	p = append(p, make([]byte, (4-len(data)%4)%4)...)
	binary.LittleEndian.PutUint32(p[8:], sctpCRC(p))
	return p
}

// sctpData returns the ports and the DATA chunk's data of packet p, or an
// error when it is malformed or its CRC32c is wrong.
func sctpData(p []byte) (sport, dport uint16, data []byte, err error) {
	if len(p) < 28 {
		return 0, 0, nil, fmt.Errorf("%d bytes, too short", len(p))
	}
	sport, dport = binary.BigEndian.Uint16(p[0:]), binary.BigEndian.Uint16(p[2:])
	if got, want := binary.LittleEndian.Uint32(p[8:]), sctpCRC(p); got != want {
		return sport, dport, nil, fmt.Errorf("CRC32c %#08x, want %#08x", got, want)
	}
	n := int(binary.BigEndian.Uint16(p[14:]))
	if n < 16 || 12+n > len(p) {
		return sport, dport, nil, fmt.Errorf("chunk length %d of a %d-byte packet", n, len(p))
	}
	return sport, dport, p[28 : 12+n], nil
}

// rawSCTP opens raw SCTP sockets of both families in ns.
func rawSCTP(t *testing.T, ns netns.NsHandle) (v4, v6 *net.IPConn) {
	t.Helper()
	err := netnsutil.Run(ns, func() error {
		var err error
		if v4, err = net.ListenIP("ip4:132", nil); err != nil {
			return err
		}
		v6, err = net.ListenIP("ip6:132", nil)
		return err
	})
	if err != nil {
		t.Fatalf("raw SCTP sockets: %v", err)
	}
	t.Cleanup(func() {
		v4.Close()
		v6.Close()
	})
	return v4, v6
}

// serveSCTP answers, in ns, every SCTP packet to port with one from port
// whose data is name, the address the packet came from and its data's
// length, or, when the packet's CRC32c is wrong, "bad checksum".
func serveSCTP(t *testing.T, ns netns.NsHandle, name string, port uint16) {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // after the sockets' cleanup (registered after it) closed them
	v4, v6 := rawSCTP(t, ns)
	for _, c := range []*net.IPConn{v4, v6} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 2048)
			for {
				n, from, err := c.ReadFrom(buf)
				if err != nil {
					return
				}
				sport, dport, data, err := sctpData(buf[:n])
				if dport != port {
					continue
				}
				answer := fmt.Sprintf("%s %s %d", name, from, len(data))
				if err != nil {
					answer = "bad checksum: " + err.Error()
				}
				c.WriteTo(sctpPacket(port, sport, []byte(answer)), from)
			}
		}()
	}
}

// sctpClient sends SCTP packets from its namespace and reads the answers.
type sctpClient struct{ v4, v6 *net.IPConn }

// exchange sends a packet of size data bytes from port sport to dst and
// returns the answer's data and where it came from (address and port);
// the answer must be to sport, with a right CRC32c.
func (c sctpClient) exchange(t *testing.T, dst netip.AddrPort, sport uint16, size int) (string, netip.AddrPort) {
	t.Helper()
	conn := c.v4
	if dst.Addr().Is6() {
		conn = c.v6
	}
	data := bytes.Repeat([]byte{byte(sport)}, size)
	if _, err := conn.WriteTo(sctpPacket(sport, dst.Port(), data), &net.IPAddr{IP: dst.Addr().AsSlice()}); err != nil {
		t.Fatalf("send to %v: %v", dst, err)
	}
	conn.SetReadDeadline(time.Now().Add(safety))
	buf := make([]byte, 2048)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			t.Fatalf("answer to port %d from %v: %v", sport, dst, err)
		}
		fromPort, dport, got, err := sctpData(buf[:n])
		if dport != sport {
			continue // another exchange's
		}
		if err != nil {
			t.Fatalf("answer to port %d from %v: %v", sport, dst, err)
		}
		addr, _ := netip.AddrFromSlice(from.(*net.IPAddr).IP)
		return string(got), netip.AddrPortFrom(addr.Unmap(), fromPort)
	}
}

// TestServiceSCTPRealTraffic sends SCTP packets of many sizes from the
// client endpoint, through raw sockets, to an SCTP ClusterIP whose
// backends listen on another port (38412 -> 38413): each arrives at a
// backend to its port with a right CRC32c, all three backends answer,
// and every answer reaches the client from the ClusterIP and its port,
// with a right CRC32c; IPv4 and IPv6. From outside, a NodePort reaches a
// backend on this node and one on another node (SNATed: both ports of
// each packet rewritten).
func TestServiceSCTPRealTraffic(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, policy.MapState{key(0, policy.Egress, policy.ProtoSCTP, 38413, 16): allow})
		for i := 1; i <= 3; i++ {
			serveSCTP(t, l.backendNS(i), fmt.Sprintf("b%d", i), 38413)
		}
		v4, v6 := rawSCTP(t, l.clientNS)
		client := sctpClient{v4, v6}
		for _, vip := range []netip.Addr{vip4, vip6} {
			fe := netip.AddrPortFrom(vip, 38412)
			l.service(t, vip, fe.Port(), datapath.ProtoSCTP, 38413, 1, 2, 3)
			seen := map[string]int{}
			for k := range 30 {
				sport, size := uint16(41000+k), 1+k*97%1400
				got, from := client.exchange(t, fe, sport, size)
				if from != fe {
					t.Fatalf("answer %q from %v, want the ClusterIP %v", got, from, fe)
				}
				name, rest, _ := strings.Cut(got, " ")
				client := epIP4
				if vip.Is6() {
					client = epIP6
				}
				if want := fmt.Sprintf("%v %d", client, size); rest != want {
					t.Fatalf("backend %s saw %q, want the client's address and %d bytes of data (%q)", name, rest, size, want)
				}
				seen[name]++
			}
			if len(seen) != 3 {
				t.Errorf("%v: 30 packets reached %v, want all of b1, b2, b3", fe, seen)
			}
		}

		// From outside: NodePorts to a local backend, and to one on
		// another node (SNATed to the node's address and a port).
		outside := l.withOutside(t)
		nodeB := l.remoteNode(t)
		serveSCTP(t, nodeB, "remote", 38413)
		ov4, ov6 := rawSCTP(t, outside)
		far := sctpClient{ov4, ov6}
		for _, tt := range []struct{ fe, be, want string }{
			{"10.2.0.1:30412", "10.1.2.2:38413", "b2 10.2.0.2"},
			{"[fd00:2::1]:30412", "[fd00:1:2::2]:38413", "b2 fd00:2::2"},
			{"10.2.0.1:30413", "10.4.0.2:38413", "remote 10.2.0.1"},
			{"[fd00:2::1]:30413", "[fd00:4::2]:38413", "remote fd00:2::1"},
		} {
			fe, be := netip.MustParseAddrPort(tt.fe), netip.MustParseAddrPort(tt.be)
			if err := l.lb.UpsertService(datapath.LBService{
				Frontend: datapath.L3n4Addr{Addr: fe.Addr(), Port: fe.Port(), Proto: datapath.ProtoSCTP}, Type: datapath.SVCTypeNodePort,
				Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: be.Addr(), Port: be.Port(), Proto: datapath.ProtoSCTP}}},
			}); err != nil {
				t.Fatal(err)
			}
			for k := range 3 {
				size := 100 + 555*k
				got, from := far.exchange(t, fe, uint16(42000+k), size)
				if from != fe || got != fmt.Sprintf("%s %d", tt.want, size) {
					t.Fatalf("NodePort %v: answer %q from %v, want %q from the NodePort", fe, got, from, fmt.Sprintf("%s %d", tt.want, size))
				}
			}
		}
	})
}

// TestServiceSCTPFragments runs fragmented SCTP packets through
// from_container (BPF_PROG_TEST_RUN): a first fragment to a frontend
// whose backend has another port is dropped (its CRC32c covers the
// fragments after it, which the program does not see), one whose
// backend has the same port is translated (addresses are not in the
// checksum); later fragments are not rewritten beyond their addresses.
func TestServiceSCTPFragments(t *testing.T) {
	h := newHarness(t)
	lb := h.lbWriter(t)
	progs := h.endpoint(t, policy.MapState{key(0, policy.Egress, policy.ProtoSCTP, 0, 0): allow}, true)
	other := lbCase{"IPv4 SCTP", testpkt.ProtoSCTP, netipAP("10.0.0.7:40000"), netipAP("10.96.0.10:38412"), netipAP("10.0.1.1:38413"), netip.AddrPort{}}
	same := lbCase{"IPv4 SCTP", testpkt.ProtoSCTP, netipAP("10.0.0.7:40000"), netipAP("10.96.0.11:38412"), netipAP("10.0.1.1:38412"), netip.AddrPort{}}
	for _, c := range []lbCase{other, same} {
		if err := lb.UpsertService(c.service(c.backA)); err != nil {
			t.Fatal(err)
		}
	}
	first := func(c lbCase) []byte {
		p := c.packet(40001, 0)
		p.MoreFragments, p.FragID = true, 7
		return withChecksums(p.MustFrame())
	}
	if ret, _ := runOut(t, progs.FromContainer, first(other)); ret != actShot {
		t.Errorf("first fragment to a frontend of another backend port: verdict %d, want drop", ret)
	}
	ret, out := runOut(t, progs.FromContainer, first(same))
	if src, dst := frameTuple(out); ret != actOK || dst != same.backA {
		t.Fatalf("first fragment to a frontend of the same backend port: %v -> %v, verdict %d; want it sent to %v", src, dst, ret, same.backA)
	}
	if err := checkChecksums(out); err != nil {
		t.Errorf("first fragment translated to the same port: %v", err)
	}
	// A later fragment of that packet: its destination address only.
	later := same.packet(40001, 0)
	later.FragOffset, later.FragID = 185, 7
	in := withChecksums(later.MustFrame())
	ret, out = runOut(t, progs.FromContainer, in)
	if dst, _ := netip.AddrFromSlice(out[30:34]); ret != actOK || dst != same.backA.Addr() || !bytes.Equal(out[34:], in[34:]) {
		t.Errorf("later fragment: sent to %v (verdict %d), payload changed %v; want %v, payload as sent", dst, ret, !bytes.Equal(out[34:], in[34:]), same.backA.Addr())
	}
}
