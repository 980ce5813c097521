package monitorcell

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/metricsmap"
	"github.com/apiary-net/apiary/policy"
)

// datapathCollector exports the programs' per-CPU packet counters (the
// metrics map) at scrape time under Cilium's names and labels, so that
// Cilium's dashboards and alerts read them unchanged:
// cilium_drop_count_total and cilium_drop_bytes_total{reason,direction},
// cilium_forward_count_total and cilium_forward_bytes_total{direction}
// (docs/observability.md, Metrics).
type datapathCollector struct {
	log                        *slog.Logger
	root                       string
	dropCount, dropBytes       *prometheus.Desc
	forwardCount, forwardBytes *prometheus.Desc
	eventsLost                 *prometheus.Desc
}

var _ prometheus.Collector = (*datapathCollector)(nil)

type datapathMetricsParams struct {
	cell.In

	Log    *slog.Logger
	Loader *loader.Loader `optional:"true"`
}

// newDatapathMetricsOut registers the collector; in an agent without the
// BPF loader there are no counters and it collects nothing.
func newDatapathMetricsOut(p datapathMetricsParams) metrics.Out {
	root := ""
	if p.Loader != nil {
		root = p.Loader.Root()
	}
	dir := []string{"direction"}
	return metrics.Out{Collector: &datapathCollector{
		log: p.Log, root: root,
		dropCount:    prometheus.NewDesc("cilium_drop_count_total", "Total dropped packets, tagged by drop reason and ingress/egress direction", []string{"reason", "direction"}, nil),
		dropBytes:    prometheus.NewDesc("cilium_drop_bytes_total", "Total dropped bytes, tagged by drop reason and ingress/egress direction", []string{"reason", "direction"}, nil),
		forwardCount: prometheus.NewDesc("cilium_forward_count_total", "Total forwarded packets, tagged by ingress/egress direction", dir, nil),
		forwardBytes: prometheus.NewDesc("cilium_forward_bytes_total", "Total forwarded bytes, tagged by ingress/egress direction", dir, nil),
		eventsLost: prometheus.NewDesc("apiary_datapath_events_lost_total",
			"Event records (drops, verdicts, traces) the programs could not write because the events ring buffer was full", dir, nil),
	}}
}

// Describe sends the descriptions.
func (c *datapathCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.dropCount
	ch <- c.dropBytes
	ch <- c.forwardCount
	ch <- c.forwardBytes
	ch <- c.eventsLost
}

// Collect reads the metrics map now; a map that cannot be read (the
// loader has not created it yet) yields no samples.
func (c *datapathCollector) Collect(ch chan<- prometheus.Metric) {
	if c.root == "" {
		return
	}
	m, err := metricsmap.Open(c.log, c.root)
	if err != nil {
		c.log.Debug("Cannot open the BPF metrics map for a scrape", "error", err)
		return
	}
	defer m.Close()
	ms, err := m.Read()
	if err != nil {
		c.log.Warn("Cannot read the BPF metrics map for a scrape", "error", err)
		return
	}
	for _, x := range ms {
		dir := metricDirection(x.Direction)
		if x.Reason == eventsmap.ReasonEventsLost {
			ch <- prometheus.MustNewConstMetric(c.eventsLost, prometheus.CounterValue, float64(x.Packets), dir)
			continue
		}
		if x.Reason == eventsmap.ReasonForwarded {
			ch <- prometheus.MustNewConstMetric(c.forwardCount, prometheus.CounterValue, float64(x.Packets), dir)
			ch <- prometheus.MustNewConstMetric(c.forwardBytes, prometheus.CounterValue, float64(x.Bytes), dir)
			continue
		}
		reason := ciliumDropReason(x.Reason)
		ch <- prometheus.MustNewConstMetric(c.dropCount, prometheus.CounterValue, float64(x.Packets), reason, dir)
		ch <- prometheus.MustNewConstMetric(c.dropBytes, prometheus.CounterValue, float64(x.Bytes), reason, dir)
	}
}

// metricDirection is Cilium's direction label: INGRESS or EGRESS.
func metricDirection(d policy.Direction) string {
	if d == policy.Egress {
		return "EGRESS"
	}
	return "INGRESS"
}

// ciliumDropReasons are Cilium's monitor names of the reasons apiary's
// programs drop for (its pkg/monitor/api drop reason table).
var ciliumDropReasons = map[eventsmap.Reason]string{
	eventsmap.ReasonPolicy:       "Policy denied",
	eventsmap.ReasonInvalid:      "Invalid packet",
	eventsmap.ReasonUnknownL3:    "Unsupported L3 protocol",
	eventsmap.ReasonPolicyDenied: "Policy denied by denylist",
}

func ciliumDropReason(r eventsmap.Reason) string {
	if n, ok := ciliumDropReasons[r]; ok {
		return n
	}
	return r.String()
}
