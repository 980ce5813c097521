package loader_test

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
)

// safety bounds waits for something that must happen; no step waits for
// something not to happen.
const safety = 10 * time.Second

// TestRealTrafficThroughAttachedPrograms sends real UDP packets across a
// veth pair between a "host" and an "endpoint" network namespace, with the
// programs attached to the host side: the endpoint's egress runs
// from_container, its ingress to_container, ARP passes, and a policy
// change through the writer changes the verdict of the next flow; with
// tcx links and with tc clsact filters.
func TestRealTrafficThroughAttachedPrograms(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode loader.AttachMode
	}{{"tcx", loader.AttachTCX}, {"tc clsact", loader.AttachTC}} {
		t.Run(mode.name, func(t *testing.T) { realTraffic(t, newHarness(t, loader.WithAttachMode(mode.mode))) })
	}
}

func realTraffic(t *testing.T, h *harness) {
	inNewNetns(t, func() {
		hostIf := newVeth(t, "lxc7")
		hostNS, epNS := splitNetns(t)
		plumb(t, hostNS, epNS)
		if err := h.ipcache.Upsert(netip.MustParsePrefix("10.0.0.1/32"), peerAID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.loader.SyncPolicyMap(epID, policy.MapState{
			key(peerAID, policy.Egress, policy.ProtoUDP, 53, 16): allow,
		}); err != nil {
			t.Fatal(err)
		}
		ep := datapath.EndpointSpec{ID: datapath.EndpointID(epID), Identity: epIdentity, IfIndex: hostIf, IngressEnforcement: true, EgressEnforcement: true}
		if err := h.loader.Attach(ep); err != nil {
			t.Fatal(err)
		}
		defer h.loader.Detach(epID)

		host53, host54 := listenIn(t, hostNS, "10.0.0.1:53"), listenIn(t, hostNS, "10.0.0.1:54")
		epConn, ep80 := listenIn(t, epNS, "10.0.0.7:0"), listenIn(t, epNS, "10.0.0.7:80")
		hostConn, hostConn2 := listenIn(t, hostNS, "10.0.0.1:0"), listenIn(t, hostNS, "10.0.0.1:0")

		// Egress allowed: the host receives it (ARP on the way passed too).
		send(t, epConn, "10.0.0.1:53", "allowed")
		receive(t, host53, "allowed")

		// Egress to another port: dropped by from_container, with an event.
		send(t, epConn, "10.0.0.1:54", "denied")
		waitDrop(t, h, policy.Egress, 54)
		nothingWaiting(t, host54)

		// Ingress has no allow: to_container drops it.
		send(t, hostConn, "10.0.0.7:80", "in-denied")
		waitDrop(t, h, policy.Ingress, 80)
		nothingWaiting(t, ep80)

		// The writer opens ingress UDP 80 for the peer: the next flow passes.
		if err := h.loader.ApplyPolicyMapChanges(epID, policy.MapChanges{Adds: map[policy.Key]policy.Entry{
			key(peerAID, policy.Ingress, policy.ProtoUDP, 80, 16): allow,
		}}); err != nil {
			t.Fatal(err)
		}
		send(t, hostConn2, "10.0.0.7:80", "in-allowed")
		receive(t, ep80, "in-allowed")
	})
}

// splitNetns returns the current (host) namespace and a new endpoint one;
// the thread stays in the host namespace.
func splitNetns(t *testing.T) (hostNS, epNS netns.NsHandle) {
	t.Helper()
	hostNS, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	epNS, err = netnsutil.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hostNS.Close(); epNS.Close() })
	return hostNS, epNS
}

// plumb moves lxc7p into epNS as 10.0.0.7/24 and gives lxc7 10.0.0.1/24.
func plumb(t *testing.T, hostNS, epNS netns.NsHandle) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	hostSide, err := netlink.LinkByName("lxc7")
	must(err)
	peer, err := netlink.LinkByName("lxc7p")
	must(err)
	must(netlink.LinkSetNsFd(peer, int(epNS)))
	addr, err := netlink.ParseAddr("10.0.0.1/24")
	must(err)
	must(netlink.AddrAdd(hostSide, addr))
	eh, err := netlink.NewHandleAt(epNS)
	must(err)
	defer eh.Close()
	peer, err = eh.LinkByName("lxc7p")
	must(err)
	addr, err = netlink.ParseAddr("10.0.0.7/24")
	must(err)
	must(eh.AddrAdd(peer, addr))
	must(eh.LinkSetUp(peer))
}

// listenIn opens a UDP socket bound to addr in namespace ns (sockets keep
// the namespace they were made in, whichever thread uses them later), of
// addr's family.
func listenIn(t *testing.T, ns netns.NsHandle, addr string) net.PacketConn {
	t.Helper()
	network := "udp4"
	if netip.MustParseAddrPort(addr).Addr().Is6() {
		network = "udp6"
	}
	var c net.PacketConn
	err := netnsutil.Run(ns, func() error {
		var err error
		c, err = net.ListenPacket(network, addr)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func send(t *testing.T, c net.PacketConn, to, msg string) {
	t.Helper()
	dst, err := net.ResolveUDPAddr("udp", to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteTo([]byte(msg), dst); err != nil {
		t.Fatal(err)
	}
}

func receive(t *testing.T, c net.PacketConn, want string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(safety))
	buf := make([]byte, 64)
	n, _, err := c.ReadFrom(buf)
	if err != nil {
		t.Fatalf("receive %q: %v", want, err)
	}
	if got := string(buf[:n]); got != want {
		t.Fatalf("received %q, want %q", got, want)
	}
}

// nothingWaiting checks, after the program dropped the packet, that the
// socket holds nothing (a poll, not a wait).
func nothingWaiting(t *testing.T, c net.PacketConn) {
	t.Helper()
	c.SetReadDeadline(time.Now())
	buf := make([]byte, 64)
	if n, _, err := c.ReadFrom(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("socket received %q (%v) though the program dropped the packet", buf[:n], err)
	}
}

// waitDrop reads events until a drop of a UDP packet to port in direction
// dir; other events (IPv6 neighbour chatter of the new links) are skipped.
func waitDrop(t *testing.T, h *harness, dir policy.Direction, port uint16) {
	t.Helper()
	deadline := time.Now().Add(safety)
	for {
		h.events.SetDeadline(deadline)
		ev, err := h.events.Read()
		if err != nil {
			t.Fatalf("waiting for the drop of UDP to port %d: %v", port, err)
		}
		if ev.Type == eventsmap.TypeDrop && ev.Direction == dir && ev.Proto == policy.ProtoUDP && ev.Dst.Port() == port {
			if ev.Reason != eventsmap.ReasonPolicy || ev.SrcIdentity == 0 || ev.DstIdentity == 0 {
				t.Errorf("drop event %+v, want reason %v with both identities", ev, eventsmap.ReasonPolicy)
			}
			return
		}
	}
}
