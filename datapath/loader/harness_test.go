package loader_test

import (
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/datapath/maps/metricsmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// The endpoint under test and its peers.
const (
	epID       uint16                   = 7
	epIdentity identity.NumericIdentity = 1000
	peerAID    identity.NumericIdentity = 2001
	peerBID    identity.NumericIdentity = 2002
)

var (
	epIP4    = netip.MustParseAddr("10.0.0.7")
	epIP6    = netip.MustParseAddr("fd00::7")
	peerA4   = netip.MustParseAddr("10.0.1.1")
	peerB4   = netip.MustParseAddr("10.0.1.2")
	peerA6   = netip.MustParseAddr("fd00::1:1")
	outside4 = netip.MustParseAddr("192.0.2.1") // in no ipcache entry: world
)

// TC verdicts.
const (
	actOK   = 0
	actShot = 2
)

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// harness is a loader on a private bpffs root with the shared maps open
// for the test to fill and read.
type harness struct {
	root    string
	loader  *loader.Loader
	ipcache *ipcachemap.Map
	ct      *ctmap.Maps
	events  *eventsmap.Reader
	metrics *metricsmap.Map
	config  *configmap.Map
}

func newHarness(t *testing.T, opts ...loader.Option) *harness {
	t.Helper()
	root := bpfmaptest.Root(t)
	log := testLogger()
	l, err := loader.New(log, root, 1024, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := &harness{root: root, loader: l}
	if h.ipcache, err = ipcachemap.Open(log, root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.ipcache.Close() })
	if h.ct, err = ctmap.Open(log, root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.ct.Close() })
	if h.events, err = eventsmap.Open(log, root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.events.Close() })
	if h.metrics, err = metricsmap.Open(log, root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.metrics.Close() })
	// As with a monitor client listening: verdicts of allowed flows too.
	if h.config, err = configmap.Open(log, root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.config.Close() })
	if err := h.config.SetFlag(configmap.FlagVerdictEvents, true); err != nil {
		t.Fatal(err)
	}
	for p, id := range map[string]identity.NumericIdentity{
		"10.0.0.7/32": epIdentity, "fd00::7/128": epIdentity,
		"10.0.1.1/32": peerAID, "10.0.1.2/32": peerBID, "fd00::1:1/128": peerAID,
	} {
		if err := h.ipcache.Upsert(netip.MustParsePrefix(p), id); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// endpoint writes ms into the endpoint's policy map and loads its
// programs.
func (h *harness) endpoint(t *testing.T, ms policy.MapState, enforce bool) *loader.Programs {
	t.Helper()
	pm, err := h.loader.PolicyMap(epID)
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	if _, _, err := pm.Sync(ms); err != nil {
		t.Fatal(err)
	}
	progs, err := h.loader.Load(datapath.EndpointSpec{ID: datapath.EndpointID(epID), Identity: epIdentity, IngressEnforcement: enforce, EgressEnforcement: enforce})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { progs.Close() })
	return progs
}

// run sends p through prog and returns the tc verdict.
func run(t *testing.T, prog *ebpf.Program, p testpkt.Packet) uint32 {
	t.Helper()
	ret, err := prog.Run(&ebpf.RunOptions{Data: p.MustFrame()})
	if err != nil {
		t.Fatalf("BPF_PROG_TEST_RUN: %v", err)
	}
	return ret
}

// drain returns the events the programs have written so far.
func (h *harness) drain(t *testing.T) []eventsmap.Event {
	t.Helper()
	var out []eventsmap.Event
	for {
		h.events.SetDeadline(time.Now()) // the records are already there: poll, do not wait
		ev, err := h.events.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

// flowPorts returns the ports the programs report for p.
func flowPorts(p testpkt.Packet) (sport, dport uint16) {
	switch {
	case p.FragOffset != 0:
		return 0, 0
	case p.Proto == testpkt.ProtoICMP && p.ICMPType == 8, p.Proto == testpkt.ProtoICMPv6 && p.ICMPType == 128:
		return p.ICMPID, 0
	case p.Proto == testpkt.ProtoICMP && p.ICMPType == 0, p.Proto == testpkt.ProtoICMPv6 && p.ICMPType == 129:
		return 0, p.ICMPID
	case p.Proto == testpkt.ProtoICMP, p.Proto == testpkt.ProtoICMPv6:
		return 0, 0
	}
	return p.Sport, p.Dport
}

// wantEvent returns the event the programs write for p through the
// program of direction dir whose peer has identity peer.
func wantEvent(p testpkt.Packet, dir policy.Direction, peer identity.NumericIdentity, typ eventsmap.Type) eventsmap.Event {
	sport, dport := flowPorts(p)
	ev := eventsmap.Event{
		Type: typ, Direction: dir, EndpointID: epID, Proto: policy.Proto(p.Proto),
		Src: netip.AddrPortFrom(p.Src, sport), Dst: netip.AddrPortFrom(p.Dst, dport),
		SrcIdentity: epIdentity, DstIdentity: peer,
	}
	if dir == policy.Ingress {
		ev.SrcIdentity, ev.DstIdentity = peer, epIdentity
	}
	if p.Proto == testpkt.ProtoICMP || p.Proto == testpkt.ProtoICMPv6 {
		ev.ICMPType = p.ICMPType
	}
	if p.Proto == testpkt.ProtoTCP && p.FragOffset == 0 {
		ev.TCPFlags = p.TCPFlags
		if ev.TCPFlags == 0 {
			ev.TCPFlags = testpkt.SYN
		}
	}
	return ev
}

func verdictEvent(p testpkt.Packet, dir policy.Direction, peer identity.NumericIdentity, allowed bool, match eventsmap.MatchType, reason eventsmap.Reason) eventsmap.Event {
	ev := wantEvent(p, dir, peer, eventsmap.TypePolicyVerdict)
	ev.Allowed, ev.MatchType, ev.Reason = allowed, match, reason
	return ev
}

func dropEvent(p testpkt.Packet, dir policy.Direction, peer identity.NumericIdentity, reason eventsmap.Reason) eventsmap.Event {
	ev := wantEvent(p, dir, peer, eventsmap.TypeDrop)
	ev.Reason = reason
	return ev
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func netipAP(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func loaderEndpoint() datapath.EndpointSpec {
	return datapath.EndpointSpec{ID: datapath.EndpointID(epID), Identity: epIdentity, IngressEnforcement: true, EgressEnforcement: true}
}
