package status

import "github.com/apiary-net/apiary/cells/cell"

// Cell collects the status of every registered provider and serves it
// on GET /v1/status. It registers the "Hive" and "Controllers" providers.
var Cell = cell.Module(
	"status",
	"Status of every subsystem for apiary status",

	cell.Provide(
		newCollector,
		newStatusHandler,
		newHiveProvider,
		newControllersProvider,
	),
)
