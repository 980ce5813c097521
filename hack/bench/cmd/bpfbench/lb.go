package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/hack/bench"
)

// The ClusterIP rows: a flow from the endpoint to a service frontend with
// two backends (both of the peer's identity, allowed by policy), on TCP
// 80 and UDP 53; Cilium's peer has the same services in its lb4 maps
// (hack/bench/ciliumlxc/peer.c).
var (
	vip      = netip.MustParseAddr("10.96.0.10")
	backends = []netip.Addr{netip.MustParseAddr("10.0.1.1"), netip.MustParseAddr("10.0.1.2")}
	ciliumIP = netip.MustParseAddr("172.16.10.1")
)

func svcPacket(dst netip.Addr, src netip.Addr, proto uint8, port uint16, flags uint8) []byte {
	return testpkt.Packet{Src: src, Dst: dst, Proto: proto, Sport: 40000, Dport: port, TCPFlags: flags}.MustFrame()
}

// setupServices writes apiary's two services.
func setupServices(root string) error {
	w, err := lbmap.OpenWriter(slog.New(slog.DiscardHandler), root)
	if err != nil {
		return err
	}
	defer w.Close()
	for _, s := range []struct {
		proto uint8
		port  uint16
	}{{datapath.ProtoTCP, 80}, {datapath.ProtoUDP, 53}} {
		svc := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: vip, Port: s.port, Proto: s.proto}, Name: "default/bench"}
		for _, b := range backends {
			svc.Backends = append(svc.Backends, datapath.LBBackend{Addr: datapath.L3n4Addr{Addr: b, Port: s.port, Proto: s.proto}})
		}
		if err := w.UpsertService(svc); err != nil {
			return fmt.Errorf("write bench service: %w", err)
		}
	}
	return nil
}

// resetAll empties apiary's IPv4 conntrack map: a new flow to a service
// leaves a service entry and the translated flow's entry.
func (o *ours) resetAll() error {
	for {
		k, err := o.ct4.NextKeyBytes(nil)
		if err != nil {
			return fmt.Errorf("empty conntrack: %w", err)
		}
		if k == nil {
			return nil
		}
		if err := o.ct4.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("empty conntrack: %w", err)
		}
	}
}

func noReset() error { return nil }

// lbRows are the ClusterIP rows' samples, one slice per row and program.
type lbRows struct {
	newTCP, estTCP, newUDP, estUDP [2][]float64 // [apiary, cilium]
}

// measureLB runs one round of the ClusterIP rows: single runs for both
// the new and the established flows.
func (r *lbRows) measureLB(o *ours, peer *ciliumPeer, runs int) error {
	for _, c := range []struct {
		proto      uint8
		port       uint16
		newS, estS *[2][]float64
	}{{testpkt.ProtoTCP, 80, &r.newTCP, &r.estTCP}, {testpkt.ProtoUDP, 53, &r.newUDP, &r.estUDP}} {
		est := uint8(0)
		if c.proto == testpkt.ProtoTCP {
			est = testpkt.ACK
		}
		for j, p := range []struct {
			prog  *ebpf.Program
			dst   netip.Addr
			src   netip.Addr
			reset func() error
		}{{o.prog, vip, src, o.resetAll}, {peer.prog, ciliumIP, ciliumPkt.Src, peer.reset}} {
			v, err := singleRuns(p.prog, svcPacket(p.dst, p.src, c.proto, c.port, 0), runs, p.reset)
			if err != nil {
				return fmt.Errorf("new flow to a ClusterIP: %w", err)
			}
			c.newS[j] = append(c.newS[j], v)
			// Single runs here too: a run of many packets would translate
			// the first only (BPF_PROG_TEST_RUN reruns the same, rewritten,
			// packet). The flow's entries are in conntrack from the last
			// new-flow run.
			if v, err = singleRuns(p.prog, svcPacket(p.dst, p.src, c.proto, c.port, est), runs, noReset); err != nil {
				return fmt.Errorf("established flow to a ClusterIP: %w", err)
			}
			c.estS[j] = append(c.estS[j], v)
		}
	}
	return nil
}

func (r *lbRows) results() []result {
	row := func(name string, s [2][]float64) result {
		return result{name: name, ours: bench.Median(s[0]), cilium: bench.Median(s[1])}
	}
	return []result{
		row("new TCP flow to a ClusterIP", r.newTCP), row("established TCP flow to a ClusterIP", r.estTCP),
		row("new UDP flow to a ClusterIP", r.newUDP), row("established UDP flow to a ClusterIP", r.estUDP),
	}
}
