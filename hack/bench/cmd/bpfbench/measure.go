package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/hack/bench/bpffloor"
	"github.com/apiary-net/apiary/policy"
)

type result struct {
	name                string
	ours, floor, cilium float64 // ns per packet
	goal                float64 // of ours / floor
}

var (
	src = netip.MustParseAddr("10.0.0.7")
	dst = netip.MustParseAddr("10.0.1.1")
	pkt = testpkt.Packet{Src: src, Dst: dst, Proto: testpkt.ProtoTCP, Sport: 40000, Dport: 80}
)

const peerID = 2001

// traceLevels are the config-map flags of -trace-events.
var traceLevels = map[string]uint32{
	"off":    0,
	"medium": configmap.FlagTraceEvents,
	"none":   configmap.FlagTraceEvents | configmap.FlagTraceAll,
}

func measure(rounds, runs, repeat int, verdictEvents bool, traceFlags uint32) ([]result, error) {
	root, done, err := bench.BPFRoot("bpfbench")
	if err != nil {
		return nil, err
	}
	defer done()
	ours, err := setupOurs(root, verdictEvents, traceFlags)
	if err != nil {
		return nil, err
	}
	defer ours.close()
	floor, err := setupFloor()
	if err != nil {
		return nil, err
	}
	defer floor.Close()
	peer, err := setupCilium()
	if err != nil {
		return nil, err
	}
	defer peer.close()
	frame, ciliumFrame := pkt.MustFrame(), ciliumPkt.MustFrame()
	fk := bpffloor.FloorFloorCtKey{Saddr: be32(src), Daddr: be32(dst), Sport: ctmap.NetworkPort(40000), Dport: ctmap.NetworkPort(80), Proto: 6, Direction: 1}
	var newOurs, newFloor, newCilium, estOurs, estFloor, estFloorCT, estCilium []float64
	var lb lbRows
	var bumpOurs, bumpCilium []float64
	// Rounds alternate the programs, so drift on a shared machine hits both.
	for range rounds {
		if err := floor.FloorHash.Delete(&fk); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, fmt.Errorf("empty floor hash: %w", err)
		}
		v, err := singleRuns(ours.prog, frame, runs, ours.reset)
		if err != nil {
			return nil, err
		}
		newOurs = append(newOurs, v)
		if v, err = singleRuns(floor.FloorProg, frame, runs, func() error { return nil }); err != nil {
			return nil, err
		}
		newFloor = append(newFloor, v)
		if v, err = singleRuns(peer.prog, ciliumFrame, runs, peer.reset); err != nil {
			return nil, err
		}
		newCilium = append(newCilium, v)
		if v, err = repeated(ours.prog, withACK(), repeat); err != nil {
			return nil, err
		}
		estOurs = append(estOurs, v)
		if err := floor.FloorHash.Put(&fk, uint64(1)); err != nil {
			return nil, fmt.Errorf("fill floor hash: %w", err)
		}
		if v, err = repeated(floor.FloorProg, withACK(), repeat); err != nil {
			return nil, err
		}
		estFloor = append(estFloor, v)
		if v, err = repeated(floor.FloorCtOnly, withACK(), repeat); err != nil {
			return nil, err
		}
		estFloorCT = append(estFloorCT, v)
		if v, err = repeated(peer.prog, ciliumWithACK(), repeat); err != nil {
			return nil, err
		}
		estCilium = append(estCilium, v)
		// Established, right after an ipcache revision bump: apiary looks
		// the flow's policy up again (ct_revalidate); Cilium's established
		// path is the same as always. Single runs for both.
		if v, err = singleRuns(ours.prog, withACK(), runs, ours.bumpIPCache); err != nil {
			return nil, err
		}
		bumpOurs = append(bumpOurs, v)
		if v, err = singleRuns(peer.prog, ciliumWithACK(), runs, noReset); err != nil {
			return nil, err
		}
		bumpCilium = append(bumpCilium, v)
		if err := lb.measureLB(ours, peer, runs); err != nil {
			return nil, err
		}
	}
	return append([]result{
		{name: "new allowed TCP flow", ours: bench.Median(newOurs), floor: bench.Median(newFloor), cilium: bench.Median(newCilium), goal: 1.5},
		{name: "established TCP flow", ours: bench.Median(estOurs), floor: bench.Median(estFloor), cilium: bench.Median(estCilium), goal: 1.2},
		{name: "established, floor without LPM", ours: bench.Median(estOurs), floor: bench.Median(estFloorCT), cilium: bench.Median(estCilium), goal: 1.2},
		{name: "established TCP after an ipcache bump", ours: bench.Median(bumpOurs), cilium: bench.Median(bumpCilium)},
	}, lb.results()...), nil
}

func withACK() []byte {
	p := pkt
	p.TCPFlags = testpkt.ACK
	return p.MustFrame()
}

func ciliumWithACK() []byte {
	p := ciliumPkt
	p.TCPFlags = testpkt.ACK
	return p.MustFrame()
}

// ours is apiary's endpoint with an egress allow for the peer on TCP 80.
type ours struct {
	l      *loader.Loader
	progs  *loader.Programs
	prog   *ebpf.Program
	ct4    *ebpf.Map
	cts    *ctmap.Maps
	events *eventsmap.Reader
	cfg    *configmap.Map
	n      int
}

func setupOurs(root string, verdictEvents bool, traceFlags uint32) (*ours, error) {
	log := slog.New(slog.DiscardHandler)
	l, err := loader.New(log, root, 1024)
	if err != nil {
		return nil, err
	}
	if err := l.Open(); err != nil {
		return nil, err
	}
	o := &ours{l: l}
	ipc, err := ipcachemap.Open(log, root)
	if err != nil {
		return nil, err
	}
	defer ipc.Close()
	for _, a := range append([]netip.Addr{dst}, backends...) {
		if err := ipc.Upsert(netip.PrefixFrom(a, 32), peerID); err != nil {
			return nil, err
		}
	}
	pm, err := l.PolicyMap(7)
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	if _, _, err := pm.Sync(policy.MapState{
		{Identity: peerID, Direction: policy.Egress, Proto: policy.ProtoTCP, Port: 80, PrefixLen: 16}: {},
		{Identity: peerID, Direction: policy.Egress, Proto: policy.ProtoUDP, Port: 53, PrefixLen: 16}: {},
	}); err != nil {
		return nil, err
	}
	if err := setupServices(root); err != nil {
		return nil, err
	}
	if o.progs, err = l.Load(datapath.EndpointSpec{ID: 7, Identity: 1000, IngressEnforcement: true, EgressEnforcement: true}); err != nil {
		return nil, err
	}
	o.prog = o.progs.FromContainer
	if o.cts, err = ctmap.Open(log, root); err != nil {
		return nil, err
	}
	o.ct4, _ = o.cts.EBPF()
	if o.events, err = eventsmap.Open(log, root); err != nil {
		return nil, err
	}
	if o.cfg, err = configmap.Open(log, root); err != nil {
		return nil, err
	}
	if err := o.cfg.SetFlag(configmap.FlagVerdictEvents, verdictEvents); err != nil {
		return nil, err
	}
	if traceFlags != 0 {
		if err := o.cfg.SetFlag(traceFlags, true); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// reset empties conntrack of the benchmark's flow and, now and then, the
// events ring (with -verdict-events, so that they keep being written).
func (o *ours) reset() error {
	k := ctmap.Key4{Saddr: src.As4(), Daddr: dst.As4(), Sport: ctmap.NetworkPort(40000), Dport: ctmap.NetworkPort(80), Proto: 6, Direction: 1}
	if err := o.ct4.Delete(&k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("empty conntrack: %w", err)
	}
	o.n++
	if o.n%1000 == 0 {
		for {
			o.events.SetDeadline(time.Now())
			if _, err := o.events.Read(); err != nil {
				break
			}
		}
	}
	return nil
}

func (o *ours) close() {
	o.cfg.Close()
	o.events.Close()
	o.cts.Close()
	o.progs.Close()
	o.l.Close()
}

func setupFloor() (*bpffloor.FloorObjects, error) {
	var objs bpffloor.FloorObjects
	if err := bpffloor.LoadFloorObjects(&objs, nil); err != nil {
		return nil, fmt.Errorf("load floor program: %w", err)
	}
	k := bpffloor.FloorFloorLpmKey{Prefixlen: 64, Family: 4}
	k.Addr[0] = be32(dst)
	if err := objs.FloorLpm.Put(&k, uint64(peerID)); err != nil {
		objs.Close()
		return nil, fmt.Errorf("fill floor LPM: %w", err)
	}
	return &objs, nil
}

// singleRuns returns the median of runs kernel-timed single runs, reset
// before each.
func singleRuns(prog *ebpf.Program, frame []byte, runs int, reset func() error) (float64, error) {
	ns := make([]float64, 0, runs)
	for range runs {
		if err := reset(); err != nil {
			return 0, err
		}
		ret, d, err := prog.Benchmark(frame, 1, nil)
		if err != nil {
			return 0, fmt.Errorf("run %s: %w", prog, err)
		}
		if ret != 0 {
			return 0, fmt.Errorf("run %s: verdict %d, want pass", prog, ret)
		}
		ns = append(ns, float64(d.Nanoseconds()))
	}
	slices.Sort(ns)
	return ns[len(ns)/2], nil
}

// repeated runs frame repeat times after one priming run and returns the
// kernel's time per packet.
func repeated(prog *ebpf.Program, frame []byte, repeat int) (float64, error) {
	if _, _, err := prog.Benchmark(frame, 1, nil); err != nil {
		return 0, fmt.Errorf("run %s: %w", prog, err)
	}
	ret, d, err := prog.Benchmark(frame, repeat, nil)
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", prog, err)
	}
	if ret != 0 {
		return 0, fmt.Errorf("run %s: verdict %d, want pass", prog, ret)
	}
	return float64(d.Nanoseconds()), nil
}

// be32 returns an IPv4 address as the uint32 the programs hold (network
// byte order in memory).
func be32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// bumpIPCache bumps the ipcache revision, so that the next packet of an
// established flow has its policy looked up again.
func (o *ours) bumpIPCache() error {
	_, err := o.cfg.BumpIPCacheRevision()
	return err
}
