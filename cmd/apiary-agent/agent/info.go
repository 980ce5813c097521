package agent

import (
	"context"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cells/version"
)

// Info reports the agent's version and uptime as the "Agent" line of
// `apiary status`.
var Info = cell.Module(
	"agent-info",
	"Agent version and uptime",

	cell.Provide(newInfoProvider),
)

func newInfoProvider(module cell.FullModuleID) status.ProviderOut {
	return status.NewProviderOut(module, "Agent", func(context.Context) status.Report {
		return status.Report{
			State:   status.Ok,
			Message: version.Get().String() + ", up " + version.Uptime().Round(time.Second).String(),
		}
	})
}
