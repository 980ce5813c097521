package store

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/metrics"
)

// Cell provides the stores' shared *Metrics and registers them with the
// agent's Prometheus registry. Stores created with WithMetrics(m) /
// WithSyncMetrics(m) report there.
var Cell = cell.Module("kvstore-stores", "Metrics of the kvstore stores",
	cell.Provide(newCellMetrics),
)

type metricsOut struct {
	cell.Out

	Metrics    *Metrics
	Collectors []prometheus.Collector `group:"metrics,flatten"`
}

func newCellMetrics() metricsOut {
	m := NewMetrics()
	return metricsOut{Metrics: m, Collectors: metrics.CollectorsOf(m)}
}
