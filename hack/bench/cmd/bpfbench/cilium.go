package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"

	ciliumbpf "github.com/cilium/cilium/pkg/bpf"
	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/hack/bench/ciliumlxc"
)

// ciliumPkt is the benchmark's flow in the addresses of Cilium's test
// framework: its endpoint 192.168.0.1 to the peer 192.168.0.2:80.
var ciliumPkt = testpkt.Packet{
	Src: netip.MustParseAddr("192.168.0.1"), Dst: netip.MustParseAddr("192.168.0.2"),
	Proto: testpkt.ProtoTCP, Sport: 40000, Dport: 80,
}

// ciliumPeer is cil_from_container of Cilium's bpf_lxc.c, loaded with
// Cilium's own loader, its ipcache and policy filled by the setup program.
type ciliumPeer struct {
	coll *ebpf.Collection
	prog *ebpf.Program
	cts  []*ebpf.Map
}

func setupCilium() (*ciliumPeer, error) {
	spec, err := ciliumlxc.Spec()
	if err != nil {
		return nil, err
	}
	for _, m := range spec.Maps {
		m.Pinning = ebpf.PinNone
	}
	coll, _, err := ciliumbpf.LoadCollection(slog.New(slog.DiscardHandler), spec, nil)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("load cilium peer: %+v", ve)
		}
		return nil, fmt.Errorf("load cilium peer: %w", err)
	}
	p := &ciliumPeer{coll: coll, prog: coll.Programs["cil_from_container"]}
	if p.prog == nil {
		coll.Close()
		return nil, fmt.Errorf("load cilium peer: no cil_from_container program")
	}
	setup := coll.Programs["apiary_bench_setup"]
	if setup == nil {
		coll.Close()
		return nil, fmt.Errorf("load cilium peer: no setup program")
	}
	if _, err := setup.Run(&ebpf.RunOptions{Data: ciliumPkt.MustFrame()}); err != nil {
		coll.Close()
		return nil, fmt.Errorf("run cilium peer setup: %w", err)
	}
	for name, m := range coll.Maps {
		if m.Type() == ebpf.LRUHash && (name == "cilium_ct4_global" || name == "cilium_ct_any4_global") {
			p.cts = append(p.cts, m)
		}
	}
	if len(p.cts) == 0 {
		coll.Close()
		return nil, fmt.Errorf("load cilium peer: no conntrack maps")
	}
	return p, nil
}

// reset empties Cilium's IPv4 conntrack maps.
func (p *ciliumPeer) reset() error {
	for _, m := range p.cts {
		for {
			k, err := m.NextKeyBytes(nil)
			if err != nil {
				return fmt.Errorf("empty cilium conntrack: %w", err)
			}
			if k == nil {
				break
			}
			if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				return fmt.Errorf("empty cilium conntrack: %w", err)
			}
		}
	}
	return nil
}

func (p *ciliumPeer) close() { p.coll.Close() }
