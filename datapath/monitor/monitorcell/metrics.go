package monitorcell

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/datapath/monitor"
)

// statsCollector reports the monitor's counters at scrape time:
// apiary_monitor_events_total{type}, apiary_monitor_events_lost_total
// and apiary_monitor_subscribers.
type statsCollector struct {
	m                    *monitor.Monitor
	events, lost, subscr *prometheus.Desc
}

var _ prometheus.Collector = (*statsCollector)(nil)

func newMetricsOut(svc *service) metrics.Out {
	return metrics.Out{Collector: &statsCollector{
		m: svc.m,
		events: prometheus.NewDesc("apiary_monitor_events_total",
			"Datapath events read from the events ring buffer, by type (drop, policy-verdict, trace)", []string{"type"}, nil),
		lost: prometheus.NewDesc("apiary_monitor_events_lost_total",
			"Datapath events dropped for monitor clients that read too slowly (one per client)", nil, nil),
		subscr: prometheus.NewDesc("apiary_monitor_subscribers",
			"Open GET /v1/monitor streams", nil, nil),
	}}
}

// Describe sends the descriptions.
func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.events
	ch <- c.lost
	ch <- c.subscr
}

// Collect reads the counters now.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.m.Stats()
	ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(st.Drops), "drop")
	ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(st.Verdicts), "policy-verdict")
	ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(st.Traces), "trace")
	ch <- prometheus.MustNewConstMetric(c.lost, prometheus.CounterValue, float64(st.Lost))
	ch <- prometheus.MustNewConstMetric(c.subscr, prometheus.GaugeValue, float64(st.Subscribers))
}
