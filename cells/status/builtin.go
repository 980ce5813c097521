package status

import (
	"context"
	"fmt"
	"strings"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
)

// ControllerFailureThreshold is the number of consecutive failures after
// which a failing controller makes the "Controllers" line a Failure
// rather than a Warning.
const ControllerFailureThreshold = 3

// newHiveProvider reports the health tree: Ok when nothing is degraded,
// else a Failure listing the degraded scopes.
func newHiveProvider(module cell.FullModuleID, health cell.HealthReporter, modules cell.ModuleLister) ProviderOut {
	out := NewProviderOut(module, "Hive", func(context.Context) Report {
		return hiveReport(modules.Modules(), health.All())
	})
	out.Provider.Live = true // read the health tree when status is read
	return out
}

func hiveReport(modules []cell.ModuleInfo, all []cell.HealthStatus) Report {
	var details []string
	degradedModules := map[string]bool{}
	for _, st := range all {
		if st.Level != cell.LevelDegraded {
			continue
		}
		line := st.ID + ": " + st.Message
		if st.Error != "" {
			line += ": " + st.Error
		}
		details = append(details, line)
		if m := innermostModule(modules, st.ID); m != "" {
			degradedModules[m] = true
		}
	}
	r := Report{State: Ok, Message: fmt.Sprintf("%d modules, %d degraded", len(modules), len(degradedModules))}
	if len(details) > 0 {
		r.State, r.Details = Failure, details
	}
	return r
}

// innermostModule returns the id of the deepest module a health scope
// belongs to.
func innermostModule(modules []cell.ModuleInfo, scope string) string {
	best := ""
	for _, m := range modules {
		id := m.ID.String()
		if (scope == id || strings.HasPrefix(scope, id+".")) && len(id) > len(best) {
			best = id
		}
	}
	return best
}

// controllersParams: the registry is absent from hives without
// controller.Cell, which then have no controllers.
type controllersParams struct {
	cell.In

	Module   cell.FullModuleID
	Registry controller.Registry `optional:"true"`
}

// newControllersProvider reports the controllers of the registry.
func newControllersProvider(p controllersParams) ProviderOut {
	return NewProviderOut(p.Module, "Controllers", func(context.Context) Report {
		var ctrls []models.ControllerStatus
		if p.Registry != nil {
			ctrls = p.Registry.Controllers()
		}
		return controllersReport(ctrls)
	})
}

func controllersReport(ctrls []models.ControllerStatus) Report {
	r := Report{State: Ok}
	for _, c := range ctrls {
		if c.ConsecutiveFailures == 0 {
			continue
		}
		r.State = models.Worse(r.State, Warning)
		if c.ConsecutiveFailures >= ControllerFailureThreshold {
			r.State = Failure
		}
		r.Details = append(r.Details, fmt.Sprintf("%s (module %s): %d consecutive failure(s): %s",
			c.Name, c.Module, c.ConsecutiveFailures, c.LastError))
	}
	r.Message = fmt.Sprintf("%d/%d healthy", len(ctrls)-len(r.Details), len(ctrls))
	return r
}
