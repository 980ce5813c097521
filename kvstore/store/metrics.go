package store

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the stores' Prometheus metrics, labelled by scope (the
// store's prefix, with the cluster for remote stores).
type Metrics struct {
	Entries     *prometheus.GaugeVec
	Skipped     *prometheus.CounterVec
	QueueSize   *prometheus.GaugeVec
	WriteErrors *prometheus.CounterVec
	Conflicts   *prometheus.CounterVec
	Synced      *prometheus.GaugeVec
}

// NewMetrics creates the metrics (unregistered).
func NewMetrics() *Metrics {
	return &Metrics{
		Entries: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "store_entries",
			Help: "Entries held by a watch store",
		}, []string{"scope"}),
		Skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "store_skipped_values_total",
			Help: "Values a watch store skipped, by reason: malformed, or refused (decodes but is not for this reader)",
		}, []string{"scope", "reason"}),
		QueueSize: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "sync_queue_size",
			Help: "Keys waiting to be written by a sync store",
		}, []string{"scope"}),
		WriteErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "sync_errors_total",
			Help: "Failed write requests of a sync store (each is retried)",
		}, []string{"scope"}),
		Conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "sync_conflicts_total",
			Help: "Keys of a sync store written again after another writer deleted or changed them",
		}, []string{"scope", "kind"}),
		Synced: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "initial_sync_completed",
			Help: "Whether a store completed its initial synchronisation (1) or not (0)",
		}, []string{"scope", "action"}),
	}
}

var defaultMetrics = NewMetrics()

func metricsOrDefault(m *Metrics) *Metrics {
	if m == nil {
		return defaultMetrics
	}
	return m
}
