package agent

import (
	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
)

// Infrastructure are the cells every agent needs: its identity, state
// directory, REST API, metrics and status collector. Their order is the
// order of the lines of `apiary status`.
var Infrastructure = cell.Group(
	Info,
	statedir.Cell,
	api.Cell,
	metrics.Cell,
	status.Cell,
)

// Agent is the whole apiary agent.
var Agent = cell.Group(
	Infrastructure,
)
