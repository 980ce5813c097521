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

func newInfoProvider(module cell.FullModuleID, lc cell.Lifecycle, health cell.Health) status.ProviderOut {
	lc.Append(cell.Hook{OnStart: infoHealth{health}.reportRunning})
	return status.NewProviderOut(module, "Agent", func(context.Context) status.Report {
		return status.Report{
			State:   status.Ok,
			Message: version.Get().String() + ", up " + version.Uptime().Round(time.Second).String(),
		}
	})
}

// infoHealth reports the module's health.
type infoHealth struct{ health cell.Health }

func (i infoHealth) reportRunning(cell.HookContext) error {
	i.health.OK("running " + version.Get().String())
	return nil
}
