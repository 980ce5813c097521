package loader_test

import (
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/policy"
)

// TestConntrackLifetimes checks the entry an allowed flow creates and how
// TCP flags change its lifetime: SYN short, established long, FIN or RST
// short again.
func TestConntrackLifetimes(t *testing.T) {
	h := newHarness(t)
	progs := h.endpoint(t, policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow}, true)
	syn := tcp("10.0.0.7", "10.0.1.1", 40000, 80)
	lifetime := func() (time.Duration, ctmap.Value) {
		t.Helper()
		entries, err := h.ct.Dump()
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Fatalf("conntrack holds %+v, want one entry", entries)
		}
		e := entries[0]
		want := ctmap.Tuple{Src: netipAP("10.0.0.7:40000"), Dst: netipAP("10.0.1.1:80"), Proto: policy.ProtoTCP, Direction: policy.Egress}
		if e.Tuple != want || e.Value.PeerIdentity != uint32(peerAID) || e.Value.EndpointID != epID {
			t.Fatalf("entry %+v, want tuple %+v peer %d endpoint %d", e, want, peerAID, epID)
		}
		return time.Duration(e.Value.Expires - ctmap.Now()), e.Value
	}
	steps := []struct {
		name     string
		egress   bool
		pkt      testpkt.Packet
		min, max time.Duration
		closing  bool
	}{
		{"SYN", true, syn, 50 * time.Second, 60 * time.Second, false},
		{"SYN-ACK", false, syn.Reply(), 5 * time.Hour, 6 * time.Hour, false},
		{"FIN", true, withFlags(syn, testpkt.FIN|testpkt.ACK), 0, 10 * time.Second, true},
		{"ACK after FIN", false, withFlags(syn.Reply(), testpkt.ACK), 0, 10 * time.Second, true},
	}
	for _, s := range steps {
		prog := progs.ToContainer
		if s.egress {
			prog = progs.FromContainer
		}
		if ret := run(t, prog, s.pkt); ret != actOK {
			t.Fatalf("%s: verdict %d, want pass", s.name, ret)
		}
		left, v := lifetime()
		if left < s.min || left > s.max {
			t.Errorf("%s: entry expires in %v, want %v..%v", s.name, left, s.min, s.max)
		}
		if closing := v.Flags&ctmap.FlagClosing != 0; closing != s.closing {
			t.Errorf("%s: closing flag %v, want %v", s.name, closing, s.closing)
		}
	}
	// RST on a fresh flow closes it as well.
	if err := h.ct.Flush(); err != nil {
		t.Fatal(err)
	}
	run(t, progs.FromContainer, syn)
	run(t, progs.ToContainer, withFlags(syn.Reply(), testpkt.RST|testpkt.ACK))
	if left, v := lifetime(); left > 10*time.Second || v.Flags&ctmap.FlagClosing == 0 {
		t.Errorf("after RST: expires in %v, flags %#x; want <= 10s and closing", left, v.Flags)
	}
}

// TestSyncIgnoresCounters checks that the counters the programs keep in
// policy entries neither make Sync rewrite them nor get lost.
func TestSyncIgnoresCounters(t *testing.T) {
	h := newHarness(t)
	state := policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow}
	progs := h.endpoint(t, state, true)
	p := tcp("10.0.0.7", "10.0.1.1", 40000, 80)
	run(t, progs.FromContainer, p)
	pm, err := h.loader.PolicyMap(epID)
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	if add, del, err := pm.Sync(state); err != nil || add+del != 0 {
		t.Fatalf("Sync of the same state after traffic: %d added, %d removed, %v; want nothing", add, del, err)
	}
	entries, err := pm.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Packets != 1 || entries[0].Bytes != uint64(len(p.MustFrame())) {
		t.Errorf("policy entries %+v, want one with 1 packet of %d bytes", entries, len(p.MustFrame()))
	}
}
