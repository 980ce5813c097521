package loader_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
)

// TestServiceNoBackendReject runs, for TCP, UDP and SCTP over IPv4 and
// IPv6, a new flow's packet to a service without backends through
// from_container (BPF_PROG_TEST_RUN): it comes back, towards the client
// (Ethernet addresses swapped, the loopback mark that lets it into the
// endpoint), as the frontend's ICMP port unreachable (ICMPv6 type 1 code
// 4) carrying the packet's IP header and first 8 bytes of L4 header,
// with right checksums, reported as dropped for Cilium's reason; with
// --service-no-backend-response=drop it is dropped.
func TestServiceNoBackendReject(t *testing.T) {
	for _, c := range lbCases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			lb := h.lbWriter(t)
			progs := h.endpoint(t, policy.MapState{}, true)
			if err := lb.UpsertService(c.service()); err != nil {
				t.Fatal(err)
			}
			h.drain(t)
			in := withChecksums(c.packet(40000, 0).MustFrame())
			ret, out := runOut(t, progs.FromContainer, in)
			if ret != actRedirect {
				t.Fatalf("verdict %d, want redirect (%d) back to the client", ret, actRedirect)
			}
			if !bytes.Equal(out[0:6], in[6:12]) || !bytes.Equal(out[6:12], in[0:6]) {
				t.Errorf("Ethernet addresses % x, want the sender's swapped (% x)", out[0:12], in[0:12])
			}
			icmp, inner, v4 := icmpOffsets(out)
			wantType, wantCode, proto := uint8(1), uint8(4), uint8(58)
			hlen := 40
			if v4 {
				wantType, wantCode, proto, hlen = 3, 3, 1, 20
			}
			if out[icmp] != wantType || out[icmp+1] != wantCode {
				t.Errorf("ICMP type %d code %d, want %d %d", out[icmp], out[icmp+1], wantType, wantCode)
			}
			_, outProto, _ := frameParts(out)
			if outProto != proto {
				t.Errorf("protocol %d, want %d", outProto, proto)
			}
			if src, innerDst := icmpTuple(out); src != c.vip.Addr() || innerDst != c.vip {
				t.Errorf("error from %v about a packet to %v, want from the frontend about one to %v", src, innerDst, c.vip)
			}
			if got, want := out[inner:], in[14:14+hlen+8]; !bytes.Equal(got, want) {
				t.Errorf("embedded % x, want the packet's IP header and 8 bytes of L4 header % x", got, want)
			}
			if err := checkICMPChecksums(out); err != nil {
				t.Error(err)
			}
			if v4 {
				if got := binary.BigEndian.Uint16(out[16:]); int(got) != len(out)-14 {
					t.Errorf("IPv4 total length %d, frame %d", got, len(out))
				}
				if dst := netip.AddrFrom4([4]byte(out[30:34])); dst != c.client.Addr() {
					t.Errorf("sent to %v, want the client %v", dst, c.client.Addr())
				}
			} else if dst := netip.AddrFrom16([16]byte(out[38:54])); dst != c.client.Addr() {
				t.Errorf("sent to %v, want the client %v", dst, c.client.Addr())
			}
			evs := h.drain(t)
			if len(evs) == 0 || evs[len(evs)-1].Type != eventsmap.TypeDrop || evs[len(evs)-1].Reason != eventsmap.ReasonNoService {
				t.Errorf("events %+v, want a drop with reason %v", evs, eventsmap.ReasonNoService)
			}

			hd := newHarness(t, loader.WithServiceNoBackendResponse(false))
			lbd := hd.lbWriter(t)
			pd := hd.endpoint(t, policy.MapState{}, true)
			if err := lbd.UpsertService(c.service()); err != nil {
				t.Fatal(err)
			}
			if ret, _ := runOut(t, pd.FromContainer, in); ret != actShot {
				t.Errorf("with --service-no-backend-response=drop: verdict %d, want drop", ret)
			}
		})
	}
}

// TestServiceNoBackendRejectRealTraffic: a pod's TCP connect to a
// ClusterIP without backends fails at once with "connection refused",
// and so does a connected UDP socket's read after its datagram, over
// IPv4 and IPv6; from outside, a NodePort without backends refuses too.
// (Dropped, each would wait for its timeout.)
func TestServiceNoBackendRejectRealTraffic(t *testing.T) {
	inNewNetns(t, func() {
		l := newLBLab(t, nil)
		outside := l.withOutside(t)
		refused := func(ns netnsFunc, network string, addr netip.AddrPort) {
			t.Helper()
			start := time.Now()
			err := ns(func() error {
				ctx, cancel := context.WithTimeout(context.Background(), safety)
				defer cancel()
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr.String())
				if err != nil {
					return err
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(safety))
				if _, err := c.Write([]byte("hi")); err != nil {
					return err
				}
				_, err = c.Read(make([]byte, 64))
				return err
			})
			if !errors.Is(err, unix.ECONNREFUSED) {
				t.Errorf("%s to %v without backends: %v, want connection refused", network, addr, err)
			}
			if d := time.Since(start); d > safety/2 {
				t.Errorf("%s to %v refused after %v, want at once", network, addr, d)
			}
		}
		for _, vip := range []netip.Addr{vip4, vip6} {
			l.service(t, vip, 80, datapath.ProtoTCP, 8080)
			l.service(t, vip, 53, datapath.ProtoUDP, 5353)
			refused(l.inClient, "tcp", netip.AddrPortFrom(vip, 80))
			refused(l.inClient, "udp", netip.AddrPortFrom(vip, 53))
		}
		for _, fe := range []string{"10.2.0.1:30080", "[fd00:2::1]:30080"} {
			f := netip.MustParseAddrPort(fe)
			if err := l.lb.UpsertService(datapath.LBService{Frontend: datapath.L3n4Addr{Addr: f.Addr(), Port: f.Port(), Proto: datapath.ProtoTCP},
				Type: datapath.SVCTypeNodePort}); err != nil {
				t.Fatal(err)
			}
			l.h.drain(t)
			refused(func(fn func() error) error { return netnsutil.Run(outside, fn) }, "tcp", f)
			// Reported as from_container reports its refusals: a drop
			// event of reason 158 from the client, to the frontend.
			if !slices.ContainsFunc(l.h.drain(t), func(ev eventsmap.Event) bool {
				return ev.Type == eventsmap.TypeDrop && ev.Reason == eventsmap.ReasonNoService && ev.Dst == f && ev.EndpointID == 0 &&
					ev.Direction == policy.Ingress && (ev.Src.Addr() == netip.MustParseAddr("10.2.0.2") || ev.Src.Addr() == netip.MustParseAddr("fd00:2::2"))
			}) {
				t.Errorf("no drop event for the refused NodePort %v", f)
			}
		}
	})
}

// netnsFunc runs a function in a network namespace.
type netnsFunc func(func() error) error

// inClient runs fn in the client endpoint's namespace.
func (l *lbLab) inClient(fn func() error) error { return netnsutil.Run(l.clientNS, fn) }
