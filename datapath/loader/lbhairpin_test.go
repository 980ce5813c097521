package loader_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/policy"
)

// TestServiceHairpin makes the client endpoint a backend of the services
// it connects to (hairpin), over IPv4 and IPv6: connections and
// datagrams it sends to the ClusterIP that are balanced to itself arrive
// from the service loopback address of the family and are answered from
// the ClusterIP, with neither its egress policy (which allows b1 only)
// nor its ingress policy (which allows nothing) in the way, as in
// Cilium; those balanced to b1 are untouched.
func TestServiceHairpin(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLabEnforcing(t, policy.MapState{
			key(peerAID, policy.Egress, policy.ProtoTCP, 8080, 16): allow,
			key(peerAID, policy.Egress, policy.ProtoUDP, 5353, 16): allow,
		}, true)
		serveWho(t, l.clientNS, "self")
		for _, fam := range []struct {
			name         string
			vip, client  netip.Addr
			loop         netip.Addr
			v6           bool
			clientListen string
		}{
			{"IPv4", vip4, epIP4, loader.DefaultServiceLoopback, false, "10.0.0.7:0"},
			{"IPv6", vip6, epIP6, loader.DefaultServiceLoopback6, true, "[fd00::7]:0"},
		} {
			t.Run(fam.name, func(t *testing.T) {
				self := "self " + fam.loop.String()
				vip := netip.AddrPortFrom(fam.vip, 80)
				l.services(t, vip, datapath.ProtoTCP, 8080, fam.client, backendAddr(1, fam.v6))
				if seen := l.names(t, vip, 30); len(seen) != 2 || seen["b1"] == 0 || seen[self] == 0 {
					t.Fatalf("30 connections reached %v, want b1 and %q", seen, self)
				}

				// An established hairpinned connection carries data both ways.
				var (
					r    *bufio.Reader
					conn net.Conn
				)
				for name := ""; name != self; {
					if conn != nil {
						conn.Close()
					}
					name, r, conn = l.hello(t, vip)
				}
				defer conn.Close()
				for i := range 5 {
					msg := fmt.Sprintf("line %d", i)
					fmt.Fprintln(conn, msg)
					got, err := r.ReadString('\n')
					if err != nil || strings.TrimSpace(got) != msg {
						t.Fatalf("echo %q over the hairpinned connection: %q, %v", msg, got, err)
					}
				}
				lport := netip.MustParseAddrPort(conn.LocalAddr().String()).Port()
				l.wantLoopbackEntry(t, netip.AddrPortFrom(fam.loop, lport), netip.AddrPortFrom(fam.client, 8080))

				// UDP: every answer comes from the ClusterIP.
				uvip := netip.AddrPortFrom(fam.vip, 53)
				l.services(t, uvip, datapath.ProtoUDP, 5353, fam.client)
				for range 3 {
					c := listenIn(t, l.clientNS, fam.clientListen)
					send(t, c, uvip.String(), "hi")
					c.SetReadDeadline(time.Now().Add(safety))
					buf := make([]byte, 64)
					n, from, err := c.ReadFrom(buf)
					if err != nil {
						t.Fatalf("UDP answer through %v: %v", uvip, err)
					}
					if from.String() != uvip.String() || string(buf[:n]) != self {
						t.Fatalf("UDP answer %q from %v, want %q from %v", buf[:n], from, self, uvip)
					}
					c.Close()
				}
			})
		}
	})
}

// wantLoopbackEntry checks the conntrack entry of the hairpinned TCP flow
// from src (the loopback address and the client's port) to dst (the
// client and its port): an ingress entry flagged loopback, carrying the
// rev-NAT index.
func (l *lbLab) wantLoopbackEntry(t *testing.T, src, dst netip.AddrPort) {
	t.Helper()
	entries, err := l.h.ct.Dump()
	if err != nil {
		t.Fatal(err)
	}
	want := ctmap.Tuple{Src: src, Dst: dst, Proto: policy.ProtoTCP, Direction: policy.Ingress}
	for _, e := range entries {
		if e.Tuple == want {
			if e.Value.Flags&ctmap.FlagLoopback == 0 || e.Value.RevNATIndex == 0 {
				t.Fatalf("hairpin entry %v: flags %#x, rev-NAT %d; want loopback and the service's index", want, e.Value.Flags, e.Value.RevNATIndex)
			}
			return
		}
	}
	t.Fatalf("no conntrack entry %v among %d", want, len(entries))
}

// services makes frontend fe balance to port bport of the addresses.
func (l *lbLab) services(t *testing.T, fe netip.AddrPort, proto uint8, bport uint16, addrs ...netip.Addr) {
	t.Helper()
	s := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: fe.Addr(), Port: fe.Port(), Proto: proto}, Name: "default/self"}
	for _, a := range addrs {
		s.Backends = append(s.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: a, Port: bport, Proto: proto}})
	}
	if err := l.lb.UpsertService(s); err != nil {
		t.Fatal(err)
	}
}

// serveWho runs, in ns, IPv4 and IPv6 servers like serve's whose greeting is name
// and the address the connection or datagram came from.
func serveWho(t *testing.T, ns netns.NsHandle, name string) {
	t.Helper()
	var (
		tls []net.Listener
		uls []net.PacketConn
	)
	err := netnsutil.Run(ns, func() error {
		for _, fam := range []string{"4", "6"} {
			tl, err := net.Listen("tcp"+fam, ":8080")
			if err != nil {
				return err
			}
			ul, err := net.ListenPacket("udp"+fam, ":5353")
			if err != nil {
				tl.Close()
				return err
			}
			tls, uls = append(tls, tl), append(uls, ul)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		for i := range tls {
			tls[i].Close()
			uls[i].Close()
		}
		wg.Wait()
	})
	for i := range tls {
		serveWhoOn(&wg, tls[i], uls[i], name)
	}
}

// serveWhoOn serves tl and ul as serveWho describes, in goroutines of wg.
func serveWhoOn(wg *sync.WaitGroup, tl net.Listener, ul net.PacketConn, name string) {
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			from := netip.MustParseAddrPort(c.RemoteAddr().String()).Addr()
			go func() {
				defer c.Close()
				fmt.Fprintln(c, name, from)
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintln(c, sc.Text())
				}
			}()
		}
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 64)
		for {
			_, from, err := ul.ReadFrom(buf)
			if err != nil {
				return
			}
			ul.WriteTo(fmt.Appendf(nil, "%s %s", name, from.(*net.UDPAddr).IP), from)
		}
	}()
}

// actRedirect is TC_ACT_REDIRECT, bpf_redirect's verdict.
const actRedirect = 7

// TestServiceHairpinTranslation runs a hairpinned TCP flow through the
// programs (BPF_PROG_TEST_RUN), IPv4 and IPv6: the client's packet to the
// ClusterIP, balanced to the client itself, leaves from_container from
// the loopback address of its family to the client's port, and the
// client's answer from the frontend to the client's port, both with
// valid checksums and sent back into the endpoint (Ethernet addresses
// swapped); a packet from the loopback address reaching to_container
// without having come through from_container's hairpin is dropped.
func TestServiceHairpinTranslation(t *testing.T) {
	for _, tt := range []struct {
		c    lbCase
		loop netip.Addr
	}{
		{lbCase{"IPv4 TCP", testpkt.ProtoTCP, netipAP("10.0.0.7:40000"), netipAP("10.96.0.10:80"), netipAP("10.0.0.7:8080"), netip.AddrPort{}}, loader.DefaultServiceLoopback},
		{lbCase{"IPv6 TCP", testpkt.ProtoTCP, netipAP("[fd00::7]:40000"), netipAP("[fd00:96::10]:80"), netipAP("[fd00::7]:8080"), netip.AddrPort{}}, loader.DefaultServiceLoopback6},
	} {
		t.Run(tt.c.name, func(t *testing.T) { hairpinTranslation(t, tt.c, tt.loop) })
	}
}

func hairpinTranslation(t *testing.T, c lbCase, loopAddr netip.Addr) {
	h := newHarness(t)
	lb := h.lbWriter(t)
	progs := h.endpoint(t, policy.MapState{}, true)
	if err := lb.UpsertService(c.service(c.backA)); err != nil {
		t.Fatal(err)
	}
	loop := netip.AddrPortFrom(loopAddr, c.client.Port())
	through := func(prog *ebpf.Program, p testpkt.Packet, src, dst netip.AddrPort) {
		t.Helper()
		in := withChecksums(p.MustFrame())
		ret, out := runOut(t, prog, in)
		if ret != actRedirect {
			t.Fatalf("%v -> %v: verdict %d, want redirect (%d)", p.Src, p.Dst, ret, actRedirect)
		}
		if err := checkChecksums(out); err != nil {
			t.Fatalf("%v -> %v: %v", p.Src, p.Dst, err)
		}
		if gotSrc, gotDst := frameTuple(out); gotSrc != src || gotDst != dst {
			t.Fatalf("%v -> %v left as %v -> %v, want %v -> %v", p.Src, p.Dst, gotSrc, gotDst, src, dst)
		}
		if !bytes.Equal(out[0:6], in[6:12]) || !bytes.Equal(out[6:12], in[0:6]) {
			t.Fatalf("Ethernet addresses % x, want the sender's swapped (% x)", out[0:12], in[0:12])
		}
	}
	syn := c.packet(c.client.Port(), testpkt.SYN)
	through(progs.FromContainer, syn, loop, c.backA)
	synAck := testpkt.Packet{Src: c.backA.Addr(), Dst: loop.Addr(), Proto: c.proto, Sport: c.backA.Port(), Dport: loop.Port(),
		TCPFlags: testpkt.SYN | testpkt.ACK}
	through(progs.FromContainer, synAck, c.vip, c.client)
	ack := c.packet(c.client.Port(), testpkt.ACK)
	through(progs.FromContainer, ack, loop, c.backA)

	forged := testpkt.Packet{Src: loop.Addr(), Dst: c.backA.Addr(), Proto: c.proto, Sport: loop.Port(), Dport: c.backA.Port(), TCPFlags: testpkt.ACK}
	if ret := run(t, progs.ToContainer, forged); ret != actShot {
		t.Fatalf("a packet from the loopback address not sent by from_container: verdict %d, want drop", ret)
	}
}
