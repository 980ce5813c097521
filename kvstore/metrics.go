package kvstore

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the kvstore client's Prometheus metrics (the stores' are
// in package store). One set serves every
// backend of an agent (the local one and those of remote clusters).
type Metrics struct {
	Operations   *prometheus.HistogramVec
	InFlight     *prometheus.GaugeVec
	Events       *prometheus.CounterVec
	QuorumErrors prometheus.Counter
	HistoryLost  prometheus.Counter
}

// NewMetrics creates the metrics (unregistered).
func NewMetrics() *Metrics {
	return &Metrics{
		Operations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "operations_duration_seconds",
			Help:    "Duration of kvstore operations by operation and outcome",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"operation", "outcome"}),
		InFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "operations_in_flight",
			Help: "Kvstore operations started and not yet returned, by operation",
		}, []string{"operation"}),
		Events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "events_received_total",
			Help: "Watch events received by type",
		}, []string{"type"}),
		QuorumErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "quorum_errors_total",
			Help: "Failed quorum checks",
		}),
		HistoryLost: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "apiary", Subsystem: "kvstore", Name: "history_lost_total",
			Help: "Times etcd was found to have gone back in time (restored from an older snapshot or empty, or replaced)",
		}),
	}
}

func (m *Metrics) observeOperation(op string, d time.Duration, err error) {
	outcome := "success"
	if err != nil {
		outcome = "failure"
	}
	m.Operations.WithLabelValues(op, outcome).Observe(d.Seconds())
}

func (m *Metrics) eventReceived(typ string) { m.Events.WithLabelValues(typ).Inc() }

func (m *Metrics) quorumError() { m.QuorumErrors.Inc() }

func (m *Metrics) historyLost() { m.HistoryLost.Inc() }
