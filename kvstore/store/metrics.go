package store

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the stores' Prometheus metrics, labelled by scope (the
// store's prefix, with the cluster for remote stores).
type Metrics struct {
	Entries     *prometheus.GaugeVec
	Malformed   *prometheus.CounterVec
	QueueSize   *prometheus.GaugeVec
	WriteErrors *prometheus.CounterVec
	Synced      *prometheus.GaugeVec
}

// NewMetrics creates the metrics (unregistered).
func NewMetrics() *Metrics {
	return &Metrics{
		Entries: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "store_entries",
			Help: "Entries held by a watch store",
		}, []string{"scope"}),
		Malformed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "store_malformed_values_total",
			Help: "Values a store could not decode and skipped",
		}, []string{"scope"}),
		QueueSize: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "sync_queue_size",
			Help: "Keys waiting to be written by a sync store",
		}, []string{"scope"}),
		WriteErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "sync_errors_total",
			Help: "Failed writes of a sync store (each is retried)",
		}, []string{"scope"}),
		Synced: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "initial_sync_completed",
			Help: "Whether a store completed its initial synchronisation (1) or not (0)",
		}, []string{"scope", "action"}),
	}
}

// Collectors returns the metrics for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Entries, m.Malformed, m.QueueSize, m.WriteErrors, m.Synced}
}

var defaultMetrics = NewMetrics()

func metricsOrDefault(m *Metrics) *Metrics {
	if m == nil {
		return defaultMetrics
	}
	return m
}
