package identitycell

import (
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the identity cell's Prometheus metrics.
// Skipped kvstore entries are counted by the watch store, in
// apiary_kvstore_store_skipped_values_total{scope="identities"}.
type Metrics struct {
	// GCDeleted counts the master keys the garbage collector deleted.
	GCDeleted prometheus.Counter
	// Identities is the number of known identities by scope, read at
	// scrape time.
	Identities *prometheus.Desc
}

// NewMetrics creates the metrics (unregistered).
func NewMetrics() *Metrics {
	return &Metrics{
		GCDeleted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "identity", Name: "gc_deleted_total",
			Help: "Unreferenced identities deleted from the kvstore by this agent's garbage collector",
		}),
		Identities: prometheus.NewDesc("apiary_identity_count",
			"Identities known to this agent, by scope (reserved, global, local, remote: of meshed clusters)", []string{"scope"}, nil),
	}
}

// countCollector reports the number of identities at scrape time.
type countCollector struct {
	m    *identitycache.Manager
	desc *prometheus.Desc
}

var _ prometheus.Collector = countCollector{}

// Describe sends the gauge's description.
func (c countCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect counts the identities now.
func (c countCollector) Collect(ch chan<- prometheus.Metric) {
	for scope, n := range c.m.Counts() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), scope)
	}
}
