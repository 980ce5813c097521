package kvstorecell

import (
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/kvstore"
)

// Cell provides the agent's kvstore Client (etcd, or disabled in
// standalone mode), its "KVStore" status line, metrics, the optional
// heartbeat writer and the read-only GET /v1/kvstore API.
var Cell = cell.Module("kvstore", "Key-value store client (etcd)",
	cell.Config(kvstore.DefaultConfig),
	cell.Config(DefaultHeartbeatConfig),
	cell.ProvidePrivate(kvstore.NewMetrics),
	cell.Provide(
		newClient,
		newStatusProvider,
		func(m *kvstore.Metrics) metrics.GroupOut { return metrics.NewGroupOut(m) },
		newGetHandler,
		newListHandler,
	),
)
