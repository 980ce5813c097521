package status

import "github.com/apiary-net/apiary/cells/cell"

// Cell collects the status of every registered provider and serves it
// on GET /v1/status. It registers the "Hive" and "Controllers" providers,
// and provides a Refresher for subsystems that know when their line
// changes.
var Cell = cell.Module(
	"status",
	"Status of every subsystem for apiary status",

	cell.ProvidePrivate(newRefresher),
	cell.Provide(
		func(r *refresher) Refresher { return r },
		newCollector,
		newStatusHandler,
		newHiveProvider,
		newControllersProvider,
		newAPIProvider,
	),
)
