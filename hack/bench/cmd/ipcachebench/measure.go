package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/stdhive"
	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/source"
)

// workload makes the metadata of the i-th prefix.
type workload struct {
	name     string
	metadata func(i int) ipcache.Metadata
}

var world = labels.Labels{labels.New(labels.SourceReserved, "world", "")}

var workloads = []workload{
	{name: "CIDR labels (a CIDR identity allocated per prefix)", metadata: func(int) ipcache.Metadata {
		return ipcache.Metadata{Labels: world}
	}},
	{name: "explicit identities (no allocation)", metadata: func(i int) ipcache.Metadata {
		return ipcache.Metadata{Identity: identity.NumericIdentity(256 + i%60000)}
	}},
}

type result struct {
	name          string
	took          time.Duration
	allocs, bytes float64
}

// counter is the one listener: it counts the changes it sees.
type counter struct{ changes atomic.Int64 }

// OnIPCacheChanged counts the changes.
func (c *counter) OnIPCacheChanged(_ ipcache.Revision, changes []ipcache.Change) {
	c.changes.Add(int64(len(changes)))
}

func measure(w workload, n, runs int) (result, error) {
	prefixes := make([]netip.Prefix, n)
	for i := range prefixes {
		prefixes[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32)
	}
	var took []time.Duration
	var allocs, bytes []float64
	for range runs {
		d, a, b, err := run(w, prefixes)
		if err != nil {
			return result{}, err
		}
		took, allocs, bytes = append(took, d), append(allocs, a), append(bytes, b)
	}
	return result{name: w.name, took: bench.Median(took), allocs: bench.Median(allocs), bytes: bench.Median(bytes)}, nil
}

// run starts a fresh hive, upserts every prefix and waits for the last
// revision; it returns the time and the heap allocations per entry.
func run(w workload, prefixes []netip.Prefix) (time.Duration, float64, float64, error) {
	l := &counter{}
	var c ipcache.IPCache
	h := stdhive.New(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		kvstorecell.Cell, identitycell.Cell, ipcachecell.Cell,
		cell.Config(cluster.DefaultInfo),
		cell.Provide(
			func(c cluster.Info) localnode.Store {
				return localnode.NewStore(localnode.LocalNode{Name: "bench", IP: netip.MustParseAddr("192.0.2.1"), Cluster: c})
			},
			func() ipcache.ListenerOut { return ipcache.ListenerOut{Listener: l} },
		),
		cell.Invoke(func(ipc ipcache.IPCache) { c = ipc }))
	ctx := context.Background()
	if err := h.Populate(); err != nil {
		return 0, 0, 0, fmt.Errorf("populate: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return 0, 0, 0, fmt.Errorf("start: %w", err)
	}
	defer func() { _ = h.Stop(ctx) }()
	mds := make([]ipcache.Metadata, len(prefixes))
	for i := range mds {
		mds[i] = w.metadata(i)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	begin := time.Now()
	var rev ipcache.Revision
	for i, p := range prefixes {
		var err error
		if rev, err = c.UpsertMetadata(p, source.Generated, "bench", mds[i]); err != nil {
			return 0, 0, 0, err
		}
	}
	if err := c.WaitForRevision(ctx, rev); err != nil {
		return 0, 0, 0, err
	}
	took := time.Since(begin)
	runtime.ReadMemStats(&after)
	if got := l.changes.Load(); got != int64(len(prefixes)) || c.Len() != len(prefixes) {
		return 0, 0, 0, fmt.Errorf("%s: the listener saw %d changes and the cache holds %d entries, want %d",
			w.name, got, c.Len(), len(prefixes))
	}
	n := float64(len(prefixes))
	return took, float64(after.Mallocs-before.Mallocs) / n, float64(after.TotalAlloc-before.TotalAlloc) / n, nil
}
