package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/version"
)

// The phases of apiary_agent_bootstrap_seconds.
const (
	PhasePopulate = "populate"
	PhaseStart    = "start"
	PhaseOverall  = "overall"
)

// bootstrapCollector exports apiary_agent_bootstrap_seconds{phase}. The
// populate and start phases come from the hive's timings when scraped;
// overall is recorded once the last start hook has run.
type bootstrapCollector struct {
	timings   cell.PhaseTimer
	lifecycle cell.Lifecycle
	desc      *prometheus.Desc

	mu      sync.Mutex
	overall time.Duration
}

var _ prometheus.Collector = (*bootstrapCollector)(nil)

func newBootstrapCollector(timings cell.PhaseTimer) *bootstrapCollector {
	return &bootstrapCollector{
		timings: timings,
		desc: prometheus.NewDesc("apiary_agent_bootstrap_seconds",
			"Duration of the agent's bootstrap phases: populate, start, and overall (from process start until the hive started)",
			[]string{"phase"}, nil),
	}
}

// appendStartedHook runs while the hive starts. A hook appended then
// runs after every hook appended before, so markStarted runs when the
// rest of the hive has started.
func (b *bootstrapCollector) appendStartedHook(cell.HookContext) error {
	b.lifecycle.Append(cell.Hook{OnStart: b.markStarted})
	return nil
}

// markStarted records the time from process start until now.
func (b *bootstrapCollector) markStarted(cell.HookContext) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.overall == 0 {
		b.overall = time.Since(version.ProcessStart())
	}
	return nil
}

func (b *bootstrapCollector) Describe(ch chan<- *prometheus.Desc) { ch <- b.desc }

func (b *bootstrapCollector) Collect(ch chan<- prometheus.Metric) {
	t := b.timings.Timings()
	b.mu.Lock()
	overall := b.overall
	b.mu.Unlock()
	for _, p := range []struct {
		phase string
		d     time.Duration
	}{{PhasePopulate, t.Populate}, {PhaseStart, t.Start}, {PhaseOverall, overall}} {
		if p.d > 0 {
			ch <- prometheus.MustNewConstMetric(b.desc, prometheus.GaugeValue, p.d.Seconds(), p.phase)
		}
	}
}
