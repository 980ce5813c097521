package controller

import (
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
)

// Registry creates managers and lists the controllers of all of them.
type Registry interface {
	// NewManager creates a manager whose controllers start and stop
	// with p.Lifecycle.
	NewManager(p ManagerParams) Manager
	// Controllers returns the status of every controller, sorted by
	// module and name.
	Controllers() []models.ControllerStatus
}

// Cell provides the Registry. A hive that has it also passes
// ModuleProviders in hive.Options.ModulePrivateProviders, so that every
// module can ask for its Manager.
var Cell = cell.Module("controllers", "Named controllers of every module",
	cell.Provide(NewRegistry),
)

// ModuleProviders are the module-private constructors of this package
// (each module's Manager), for hive.Options.ModulePrivateProviders.
var ModuleProviders = []any{NewModuleManager}

// NewRegistry returns an empty registry.
func NewRegistry() Registry {
	return &registry{managers: map[*manager]struct{}{}}
}

type registry struct {
	mu       sync.Mutex
	managers map[*manager]struct{}
}

func (r *registry) NewManager(p ManagerParams) Manager {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	m := &manager{params: p, controllers: map[string]*controller{}}
	r.mu.Lock()
	r.managers[m] = struct{}{}
	r.mu.Unlock()
	p.Lifecycle.Append(m)
	return m
}

func (r *registry) Controllers() []models.ControllerStatus {
	r.mu.Lock()
	managers := make([]*manager, 0, len(r.managers))
	for m := range r.managers {
		managers = append(managers, m)
	}
	r.mu.Unlock()
	var out []models.ControllerStatus
	for _, m := range managers {
		out = append(out, m.statuses()...)
	}
	slices.SortFunc(out, func(a, b models.ControllerStatus) int {
		if c := strings.Compare(a.Module, b.Module); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// ModuleManagerParams are the dependencies of NewModuleManager.
type ModuleManagerParams struct {
	cell.In

	Registry  Registry
	Health    cell.Health
	Lifecycle cell.Lifecycle
	Logger    *slog.Logger
	Module    cell.FullModuleID
}

// NewModuleManager creates the controller manager of one module.
func NewModuleManager(p ModuleManagerParams) Manager {
	return p.Registry.NewManager(ManagerParams{
		Health:    p.Health,
		Lifecycle: p.Lifecycle,
		Logger:    p.Logger,
		Module:    p.Module,
	})
}
