package stdhive

import (
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/job"
)

// moduleProviders are the module-private providers New adds.
var moduleProviders = [][]any{job.ModuleProviders, controller.ModuleProviders}

// New builds a hive of cells with opts, adding the project's
// module-private providers (a job.Group and a controller.Manager per
// module) to any in opts.ModulePrivateProviders. Add controller.Cell to
// the cells when a cell uses controllers.
func New(opts hive.Options, cells ...cell.Cell) *hive.Hive {
	providers := append([]any(nil), opts.ModulePrivateProviders...)
	for _, ps := range moduleProviders {
		providers = append(providers, ps...)
	}
	opts.ModulePrivateProviders = providers
	return hive.NewWithOptions(opts, cells...)
}
