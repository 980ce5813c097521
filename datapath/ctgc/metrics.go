package ctgc

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the collector's Prometheus metrics (Cilium's
// datapath_conntrack_gc_* under apiary's namespace).
type Metrics struct {
	// Runs counts the runs by status (completed, failed).
	Runs *prometheus.CounterVec
	// Entries is the number of entries the last run kept (status alive)
	// and deleted (status deleted: expired; status orphaned: of no
	// restored endpoint).
	Entries *prometheus.GaugeVec
	// Deleted counts every entry deleted, by reason (expired, orphaned).
	Deleted *prometheus.CounterVec
	// Duration is the time of a run.
	Duration prometheus.Histogram
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "datapath", Name: "conntrack_gc_runs_total",
			Help: "Conntrack GC runs, by status (completed, failed)",
		}, []string{"status"}),
		Entries: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiary", Subsystem: "datapath", Name: "conntrack_gc_entries",
			Help: "Conntrack entries the last GC run kept (alive) and deleted (expired, orphaned)",
		}, []string{"status"}),
		Deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "datapath", Name: "conntrack_gc_deleted_total",
			Help: "Conntrack entries deleted by the GC, by reason (expired, orphaned)",
		}, []string{"reason"}),
		Duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "apiary", Subsystem: "datapath", Name: "conntrack_gc_duration_seconds",
			Help: "Duration of a conntrack GC run", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8),
		}),
	}
}
