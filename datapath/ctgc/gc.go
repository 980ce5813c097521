package ctgc

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/apiary-net/apiary/datapath/maps/ctmap"
)

// Endpoints is what the first run needs of the endpoint manager
// (*endpoint.Manager): to wait for the restore and the endpoints'
// addresses.
type Endpoints interface {
	WaitForLocalRestore(ctx context.Context) error
	EndpointAddrs() []netip.Addr
}

// GC runs the conntrack garbage collection. Run is called by one
// goroutine at a time.
type GC struct {
	maps    *ctmap.Maps
	eps     Endpoints // nil: no orphan pass
	metrics *Metrics
	log     *slog.Logger
	now     func() uint64

	firstDone bool
}

// New returns a collector of maps; eps (optional) gives the endpoints
// whose entries the first run keeps.
func New(maps *ctmap.Maps, eps Endpoints, m *Metrics, log *slog.Logger) *GC {
	return &GC{maps: maps, eps: eps, metrics: m, log: log, now: ctmap.Now}
}

// Run deletes the expired entries; the first successful run also
// deletes the entries of endpoints that were not restored.
func (g *GC) Run(ctx context.Context) (ctmap.GCStats, error) {
	var filter ctmap.GCFilter
	if !g.firstDone && g.eps != nil {
		if err := g.eps.WaitForLocalRestore(ctx); err != nil {
			return ctmap.GCStats{}, err
		}
		keep := map[netip.Addr]bool{}
		for _, a := range g.eps.EndpointAddrs() {
			keep[a] = true
		}
		filter.Keep = func(e ctmap.Entry) bool { return keep[e.Tuple.EndpointAddr()] }
	}
	start := time.Now()
	st, err := g.maps.GC(g.now(), filter)
	g.metrics.Duration.Observe(time.Since(start).Seconds())
	if err != nil {
		g.metrics.Runs.WithLabelValues("failed").Inc()
		return st, fmt.Errorf("conntrack gc: %w", err)
	}
	g.metrics.Runs.WithLabelValues("completed").Inc()
	g.metrics.Entries.WithLabelValues("alive").Set(float64(st.Alive))
	g.metrics.Entries.WithLabelValues("expired").Set(float64(st.Expired))
	g.metrics.Entries.WithLabelValues("orphaned").Set(float64(st.Orphaned))
	g.metrics.Deleted.WithLabelValues("expired").Add(float64(st.Expired))
	g.metrics.Deleted.WithLabelValues("orphaned").Add(float64(st.Orphaned))
	if filter.Keep != nil {
		g.log.Info("First conntrack GC after start", "alive", st.Alive, "expired", st.Expired,
			"orphaned", st.Orphaned)
	}
	g.firstDone = true
	return st, nil
}
