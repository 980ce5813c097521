package api

import "github.com/apiary-net/apiary/cells/cell"

// Cell serves the REST API on --socket-path. It is started on its own
// (an Invoke constructs the server), so an agent always has its API.
var Cell = cell.Module(
	"api-server",
	"REST API on a unix socket",

	cell.Config(DefaultConfig),
	cell.ProvidePrivate(newInflightFromConfig),
	cell.Provide(newServer, func(f *inflight) Requests { return f }),
	cell.Invoke(requireServer),
)

// requireServer makes the hive construct the server (and so append its
// start hook) even when no other cell asks for it.
func requireServer(Server) {}
