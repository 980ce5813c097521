package metrics

import "github.com/apiary-net/apiary/cells/cell"

// Cell provides the agent's Prometheus registry and serves it on
// --prometheus-serve-addr.
var Cell = cell.Module(
	"metrics",
	"Prometheus metrics registry and /metrics endpoint",

	cell.Config(DefaultConfig),
	cell.Provide(newRegistry, newServer, newStatusProvider),
	cell.Invoke(requireServer),
)

// requireServer makes the hive construct the server even when no other
// cell asks for it.
func requireServer(Server) {}
