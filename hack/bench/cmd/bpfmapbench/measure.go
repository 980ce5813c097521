package main

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

type row struct {
	name      string
	ours, raw time.Duration
	fmt       func(time.Duration) string
	goal      string
}

var log = slog.New(slog.DiscardHandler)

func measure(prefixes, keys, services, backends, rounds int) ([]row, error) {
	root, done, err := bench.BPFRoot("bpfmapbench")
	if err != nil {
		return nil, err
	}
	defer done()

	var ipcOurs, ipcRaw, polOurs, polRaw, oneOurs, oneRaw, lbOurs, lbRaw, lbOneOurs, lbOneRaw []time.Duration
	for r := range rounds {
		dir := filepath.Join(root, fmt.Sprint(r))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, err
		}
		a, b, err := ipcacheRound(r, dir, prefixes)
		if err != nil {
			return nil, err
		}
		ipcOurs, ipcRaw = append(ipcOurs, a), append(ipcRaw, b)
		a, b, c, d, err := policyRound(dir, keys)
		if err != nil {
			return nil, err
		}
		polOurs, polRaw = append(polOurs, a), append(polRaw, b)
		oneOurs, oneRaw = append(oneOurs, c), append(oneRaw, d)
		if a, b, c, d, err = lbRound(r, dir, services, backends); err != nil {
			return nil, err
		}
		lbOurs, lbRaw = append(lbOurs, a), append(lbRaw, b)
		lbOneOurs, lbOneRaw = append(lbOneOurs, c), append(lbOneRaw, d)
	}
	perSec := func(n int) func(time.Duration) string {
		return func(d time.Duration) string { return fmt.Sprintf("%.0f entries/s", float64(n)/d.Seconds()) }
	}
	perChange := func(d time.Duration) string { return fmt.Sprintf("%.1f µs/change", float64(d.Nanoseconds())/1e3) }
	return []row{
		{fmt.Sprintf("ipcache: %d prefixes, ApplyBatch", prefixes), bench.Median(ipcOurs), bench.Median(ipcRaw), perSec(prefixes), ">= 0.8x"},
		{fmt.Sprintf("policy: %d keys from empty, Sync", keys), bench.Median(polOurs), bench.Median(polRaw), perSec(keys), ""},
		{"policy: 1-key change, Apply", bench.Median(oneOurs), bench.Median(oneRaw), perChange, ""},
		{fmt.Sprintf("lb: %d services x %d backends from empty, ReconcileServices", services, backends), bench.Median(lbOurs), bench.Median(lbRaw),
			func(d time.Duration) string { return fmt.Sprintf("%.0f services/s", float64(services)/d.Seconds()) }, ">= 0.67x (<= 1.5x the time)"},
		{"lb: 1-backend change of a service, UpsertService", bench.Median(lbOneOurs), bench.Median(lbOneRaw), perChange, ""},
	}, nil
}

// ipcacheRound writes n prefixes with ApplyBatch into an empty pinned
// ipcache map, and the same keys in the same order with raw updates into
// an empty map of the same spec.
func ipcacheRound(round int, dir string, n int) (ours, raw time.Duration, err error) {
	// The same entries for both, in an order that is not the trie's (as
	// an ipcache's changes arrive).
	entries := make([]datapath.IPCacheMapEntry, 0, n)
	for i := range n {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		entries = append(entries, datapath.IPCacheMapEntry{Prefix: netip.PrefixFrom(a, 32), Identity: identity.NumericIdentity(256 + i%50000)})
	}
	rng := rand.New(rand.NewPCG(uint64(round), 1))
	rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	keys := make([]ipcachemap.Key, 0, n)
	values := make([]ipcachemap.Value, 0, n)
	for _, e := range entries {
		k, _ := ipcachemap.NewKey(e.Prefix)
		keys, values = append(keys, k), append(values, ipcachemap.NewValue(e.Identity))
	}
	m, err := ipcachemap.Open(log, dir)
	if err != nil {
		return 0, 0, err
	}
	defer m.Close()
	spec, err := bpfmap.MapSpec(ipcachemap.MapName)
	if err != nil {
		return 0, 0, err
	}
	rm, err := ebpf.NewMap(spec)
	if err != nil {
		return 0, 0, err
	}
	defer rm.Close()
	runOurs := func() error {
		start := time.Now()
		err := m.ApplyBatch(entries, nil)
		ours = time.Since(start)
		return err
	}
	runRaw := func() error {
		start := time.Now()
		err := bench.RawUpdate(rm, keys, values)
		raw = time.Since(start)
		return err
	}
	return ours, raw, bench.InOrder(round, runOurs, runRaw)
}

// policyRound writes an n-key state with Sync and with raw updates, then
// times 1-key changes (an add and a delete, alternating) with Apply and
// with raw update/delete.
func policyRound(dir string, n int) (syncOurs, syncRaw, oneOurs, oneRaw time.Duration, err error) {
	state := make(policy.MapState, n)
	for i := range n {
		state[policy.Key{Identity: identity.NumericIdentity(256 + i/4), Direction: policy.Direction(i % 2),
			Proto: policy.ProtoTCP, Port: uint16(1000 + i%2), PrefixLen: 16}] = policy.Entry{}
	}
	m, err := policymap.Open(log, dir, 1, uint32(n+1))
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer m.Close()
	start := time.Now()
	if _, _, err := m.Sync(state); err != nil {
		return 0, 0, 0, 0, err
	}
	syncOurs = time.Since(start)

	want, err := policymap.Translate(state)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	keys := make([]policymap.Key, 0, len(want))
	values := make([]policymap.Value, 0, len(want))
	for k, e := range want {
		keys = append(keys, k)
		values = append(values, policymap.Value{L4Prefixlen: e.L4Prefixlen})
	}
	spec, err := bpfmap.MapSpec(policymap.SpecName)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	spec.MaxEntries = uint32(n + 1)
	rm, err := ebpf.NewMap(spec)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer rm.Close()
	start = time.Now()
	if err := bench.RawUpdate(rm, keys, values); err != nil {
		return 0, 0, 0, 0, err
	}
	syncRaw = time.Since(start)

	oneOurs, oneRaw, err = oneKeyChanges(m, rm)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	return syncOurs, syncRaw, oneOurs, oneRaw, nil
}

// oneKeyChanges times 1-key changes (an add and a delete, alternating)
// with Apply on m and with raw update/delete on rm; both hold the same
// state.
func oneKeyChanges(m *policymap.Map, rm *ebpf.Map) (ours, raw time.Duration, err error) {
	const changes = 2000
	extra := policy.Key{Identity: 99999, Direction: policy.Egress, Proto: policy.ProtoUDP, Port: 53, PrefixLen: 16}
	add := policy.MapChanges{Adds: map[policy.Key]policy.Entry{extra: {}}}
	del := policy.MapChanges{Deletes: []policy.Key{extra}}
	start := time.Now()
	for i := range changes {
		ch := add
		if i%2 == 1 {
			ch = del
		}
		if _, _, err := m.Apply(ch); err != nil {
			return 0, 0, err
		}
	}
	ours = time.Since(start) / changes
	ek, _ := policymap.NewKey(extra)
	ev := policymap.Value{L4Prefixlen: 24}
	start = time.Now()
	for i := range changes {
		var err error
		if i%2 == 0 {
			err = rm.Update(&ek, &ev, ebpf.UpdateAny)
		} else {
			err = rm.Delete(&ek)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	raw = time.Since(start) / changes
	return ours, raw, nil
}
