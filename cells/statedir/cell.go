package statedir

import "github.com/apiary-net/apiary/cells/cell"

// Cell provides the agent's state directory (--state-dir) and the "State
// dir" status line.
var Cell = cell.Module(
	"statedir",
	"State directory that survives restarts",

	cell.Config(DefaultConfig),
	cell.Provide(newDir, newStatusProvider),
)
