package job

import (
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
)

// ModuleProviders are the module-private constructors of this package
// (each module's Group), for hive.Options.ModulePrivateProviders: with
// them, a cell just asks for a job.Group.
var ModuleProviders = []any{NewModuleGroup}

// ModuleGroupParams are the dependencies of NewModuleGroup.
type ModuleGroupParams struct {
	cell.In

	Health     cell.Health
	Lifecycle  cell.Lifecycle
	Logger     *slog.Logger
	Shutdowner cell.Shutdowner
	Module     cell.FullModuleID
}

// NewModuleGroup creates the job group of one module.
func NewModuleGroup(p ModuleGroupParams) Group {
	return NewGroup(GroupParams{
		Health:     p.Health,
		Lifecycle:  p.Lifecycle,
		Logger:     p.Logger,
		Shutdowner: p.Shutdowner,
		Module:     p.Module,
	})
}
