package loader_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
)

// syncedEndpoint writes ms through the loader's policy-map writer (which
// bumps the policy revision) and loads the endpoint's programs.
func (h *harness) syncedEndpoint(t *testing.T, ms policy.MapState) *loader.Programs {
	t.Helper()
	h.sync(t, ms)
	progs, err := h.loader.Load(loaderEndpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { progs.Close() })
	return progs
}

func (h *harness) sync(t *testing.T, ms policy.MapState) {
	t.Helper()
	if _, _, err := h.loader.SyncPolicyMap(epID, ms); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) revision(t *testing.T) uint32 {
	t.Helper()
	rev, err := h.loader.PolicyRevision(epID)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// onlyEntry returns the one conntrack entry.
func (h *harness) onlyEntry(t *testing.T) ctmap.Entry {
	t.Helper()
	entries, err := h.ct.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("conntrack holds %+v, want one entry", entries)
	}
	return entries[0]
}

// drainNoLen is drain with the lengths zeroed (the events the tests
// build have none).
func (h *harness) drainNoLen(t *testing.T) []eventsmap.Event {
	t.Helper()
	got := h.drain(t)
	for i := range got {
		got[i].Len = 0
	}
	return got
}

func withFlagsACK(p testpkt.Packet) testpkt.Packet { return withFlags(p, testpkt.ACK) }

// TestPolicyChangeReachesEstablishedFlows: an established flow is
// re-decided on its next packet after the endpoint's policy changed: a
// change that still allows it moves its entry to the new revision, one
// that denies it drops the packet (with a drop event) and ends the flow
// for both directions.
func TestPolicyChangeReachesEstablishedFlows(t *testing.T) {
	h := newHarness(t)
	allow80 := policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow}
	progs := h.syncedEndpoint(t, allow80)
	rev0 := h.revision(t)
	syn := tcp("10.0.0.7", "10.0.1.1", 40000, 80)
	for _, s := range []struct {
		egress bool
		pkt    testpkt.Packet
	}{{true, syn}, {false, syn.Reply()}, {true, withFlagsACK(syn)}} {
		prog := progs.ToContainer
		if s.egress {
			prog = progs.FromContainer
		}
		if ret := run(t, prog, s.pkt); ret != actOK {
			t.Fatalf("handshake %+v: verdict %d, want pass", s.pkt, ret)
		}
	}
	if e := h.onlyEntry(t); e.Value.PolicyRev != rev0 {
		t.Fatalf("entry revision %d, want the endpoint's %d", e.Value.PolicyRev, rev0)
	}
	h.drain(t)

	// A change that keeps the flow allowed: the next packet passes and
	// the entry moves to the new revision, counted by the policy entry.
	keep := policy.MapState{
		key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow,
		key(peerBID, policy.Egress, policy.ProtoUDP, 53, 16): allow,
	}
	h.sync(t, keep)
	rev1 := h.revision(t)
	if rev1 == rev0 {
		t.Fatalf("revision stayed %d after a policy change", rev0)
	}
	h.sync(t, keep)
	if r := h.revision(t); r != rev1 {
		t.Fatalf("revision moved %d -> %d on a sync that changed nothing", rev1, r)
	}
	data := withFlagsACK(syn)
	if ret := run(t, progs.FromContainer, data); ret != actOK {
		t.Fatalf("data after an unrelated policy change: verdict %d, want pass", ret)
	}
	if e := h.onlyEntry(t); e.Value.PolicyRev != rev1 {
		t.Errorf("entry revision %d after revalidation, want %d", e.Value.PolicyRev, rev1)
	}
	want := []eventsmap.Event{verdictEvent(data, policy.Egress, peerAID, true, eventsmap.MatchL3L4, eventsmap.ReasonForwarded)}
	if got := h.drainNoLen(t); !slices.Equal(got, want) {
		t.Errorf("revalidation events %+v, want %+v", got, want)
	}

	// Removing the allow: the next forward packet drops, as do replies.
	h.sync(t, policy.MapState{})
	if ret := run(t, progs.FromContainer, data); ret != actShot {
		t.Fatalf("data after the allow was removed: verdict %d, want drop", ret)
	}
	want = []eventsmap.Event{
		verdictEvent(data, policy.Egress, peerAID, false, eventsmap.MatchNone, eventsmap.ReasonPolicy),
		dropEvent(data, policy.Egress, peerAID, eventsmap.ReasonPolicy),
	}
	if got := h.drainNoLen(t); !slices.Equal(got, want) {
		t.Errorf("events of the denied packet %+v, want %+v", got, want)
	}
	reply := withFlagsACK(syn.Reply())
	if ret := run(t, progs.ToContainer, reply); ret != actShot {
		t.Errorf("reply of the denied flow: verdict %d, want drop", ret)
	}
	if ret := run(t, progs.FromContainer, data); ret != actShot {
		t.Errorf("second data packet of the denied flow: verdict %d, want drop", ret)
	}
}

// TestPolicyChangeReachesRepliesFirst: after a change, the flow is
// re-decided on whichever packet comes first, a reply included; an ICMP
// echo reply is matched as the echo request that opened the flow.
func TestPolicyChangeReachesRepliesFirst(t *testing.T) {
	h := newHarness(t)
	allowPing := policy.MapState{key(peerAID, policy.Egress, policy.ProtoICMP, 8, 16): allow}
	progs := h.syncedEndpoint(t, allowPing)
	ping := icmp("10.0.0.7", "10.0.1.1", testpkt.ProtoICMP, 8, 77)
	if ret := run(t, progs.FromContainer, ping); ret != actOK {
		t.Fatalf("echo request: verdict %d, want pass", ret)
	}
	// Still allowed (by type 8, not by the reply's type 0).
	h.sync(t, policy.MapState{
		key(peerAID, policy.Egress, policy.ProtoICMP, 8, 16):  allow,
		key(peerBID, policy.Egress, policy.ProtoTCP, 443, 16): allow,
	})
	if ret := run(t, progs.ToContainer, ping.Reply()); ret != actOK {
		t.Fatalf("echo reply after an unrelated change: verdict %d, want pass", ret)
	}
	if e := h.onlyEntry(t); e.Value.PolicyRev != h.revision(t) {
		t.Errorf("entry revision %d, want %d", e.Value.PolicyRev, h.revision(t))
	}
	// Denied: the reply is the packet that finds out.
	h.sync(t, policy.MapState{})
	h.drain(t)
	if ret := run(t, progs.ToContainer, ping.Reply()); ret != actShot {
		t.Fatalf("echo reply after the allow was removed: verdict %d, want drop", ret)
	}
	got := h.drain(t)
	if n := len(got); n == 0 || got[n-1].Type != eventsmap.TypeDrop || got[n-1].Direction != policy.Ingress {
		t.Errorf("events %+v, want an ingress drop last", got)
	}
	if ret := run(t, progs.FromContainer, ping); ret != actShot {
		t.Errorf("next echo request: verdict %d, want drop", ret)
	}
}

// TestConntrackCounters: an entry counts the packets and bytes of each
// direction.
func TestConntrackCounters(t *testing.T) {
	h := newHarness(t)
	progs := h.syncedEndpoint(t, policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow})
	syn := tcp("10.0.0.7", "10.0.1.1", 40000, 80)
	fwd := []testpkt.Packet{syn, withFlagsACK(syn), withFlags(syn, testpkt.ACK|testpkt.FIN)}
	rev := []testpkt.Packet{syn.Reply(), withFlagsACK(syn.Reply())}
	var want ctmap.Value
	for _, p := range fwd {
		run(t, progs.FromContainer, p)
		want.TxPackets++
		want.TxBytes += uint64(len(p.MustFrame()))
	}
	for _, p := range rev {
		run(t, progs.ToContainer, p)
		want.RxPackets++
		want.RxBytes += uint64(len(p.MustFrame()))
	}
	v := h.onlyEntry(t).Value
	got := ctmap.Value{TxPackets: v.TxPackets, TxBytes: v.TxBytes, RxPackets: v.RxPackets, RxBytes: v.RxBytes}
	if got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}
	if v.TCPFlags != testpkt.SYN|testpkt.ACK|testpkt.FIN {
		t.Errorf("TCP flags %#x, want SYN|ACK|FIN", v.TCPFlags)
	}
}

// TestVerdictEventsOnlyWhileListening: without the config flag an allowed
// new flow writes no event; a denied one still writes its drop.
func TestVerdictEventsOnlyWhileListening(t *testing.T) {
	h := newHarness(t)
	if err := h.config.SetFlag(configmap.FlagVerdictEvents, false); err != nil {
		t.Fatal(err)
	}
	progs := h.syncedEndpoint(t, policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow})
	allowed, denied := tcp("10.0.0.7", "10.0.1.1", 40000, 80), tcp("10.0.0.7", "10.0.1.2", 40000, 80)
	if ret := run(t, progs.FromContainer, allowed); ret != actOK {
		t.Fatalf("allowed flow: verdict %d", ret)
	}
	if ret := run(t, progs.FromContainer, denied); ret != actShot {
		t.Fatalf("denied flow: verdict %d", ret)
	}
	want := []eventsmap.Event{dropEvent(denied, policy.Egress, peerBID, eventsmap.ReasonPolicy)}
	if got := h.drainNoLen(t); !slices.Equal(got, want) {
		t.Errorf("events %+v, want only %+v", got, want)
	}
}

// TestIPCacheChangeReachesEstablishedFlows: when the peer's address moves
// to another identity in the ipcache, its established flow is decided
// again under the new identity; an ipcache write that leaves the peer's
// identity alone keeps the flow.
func TestIPCacheChangeReachesEstablishedFlows(t *testing.T) {
	h := newHarness(t)
	progs := h.syncedEndpoint(t, policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow})
	syn := tcp("10.0.0.7", "10.0.1.1", 40000, 80)
	run(t, progs.FromContainer, syn)
	run(t, progs.ToContainer, syn.Reply())
	data := withFlagsACK(syn)

	// Another prefix changes: the flow is looked up again and stays.
	if err := h.ipcache.Upsert(netip.MustParsePrefix("10.0.9.0/24"), peerBID); err != nil {
		t.Fatal(err)
	}
	before := h.onlyEntry(t).Value.IPCacheRev
	if ret := run(t, progs.FromContainer, data); ret != actOK {
		t.Fatalf("data after an unrelated ipcache change: verdict %d, want pass", ret)
	}
	if e := h.onlyEntry(t); e.Value.IPCacheRev == before || e.Value.PeerIdentity != uint32(peerAID) {
		t.Errorf("entry after revalidation: ipcache revision %d (was %d), peer %d; want a new revision, peer %d",
			e.Value.IPCacheRev, before, e.Value.PeerIdentity, peerAID)
	}

	// The peer's address now belongs to an identity the policy does not
	// allow: the next packet, and the replies after it, drop.
	if err := h.ipcache.Upsert(netip.MustParsePrefix("10.0.1.1/32"), peerBID); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	if ret := run(t, progs.FromContainer, data); ret != actShot {
		t.Fatalf("data after the peer changed identity: verdict %d, want drop", ret)
	}
	want := []eventsmap.Event{
		verdictEvent(data, policy.Egress, peerBID, false, eventsmap.MatchNone, eventsmap.ReasonPolicy),
		dropEvent(data, policy.Egress, peerBID, eventsmap.ReasonPolicy),
	}
	if got := h.drainNoLen(t); !slices.Equal(got, want) {
		t.Errorf("events %+v, want %+v", got, want)
	}
	if ret := run(t, progs.ToContainer, withFlagsACK(syn.Reply())); ret != actShot {
		t.Errorf("reply after the peer changed identity: verdict %d, want drop", ret)
	}
}
