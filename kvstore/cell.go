package kvstore

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/cell"
)

// Cell provides the agent's kvstore Client (etcd, or disabled in
// standalone mode), its "KVStore" status line, metrics, the optional
// heartbeat writer and the read-only GET /v1/kvstore API.
var Cell = cell.Module("kvstore", "Key-value store client (etcd)",
	cell.Config(DefaultConfig),
	cell.Config(DefaultHeartbeatConfig),
	cell.ProvidePrivate(NewMetrics),
	cell.Provide(
		newClient,
		newStatusProvider,
		newMetricsOut,
		newGetHandler,
		newListHandler,
	),
)

// metricsOut registers the kvstore metrics with the agent's registry.
type metricsOut struct {
	cell.Out

	Collectors []prometheus.Collector `group:"metrics,flatten"`
}

func newMetricsOut(m *Metrics) metricsOut {
	return metricsOut{Collectors: m.Collectors()}
}
