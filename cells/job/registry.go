package job

import (
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/cells/cell"
)

// Registry creates job groups and lists the controllers of all of them.
type Registry interface {
	// NewGroup creates a group whose jobs start and stop with lc.
	NewGroup(p GroupParams) Group
	// Controllers returns the status of every controller, sorted by
	// module and name.
	Controllers() []ControllerStatus
}

// GroupParams are what a group needs from its module.
type GroupParams struct {
	Health     cell.Health
	Lifecycle  cell.Lifecycle
	Logger     *slog.Logger
	Shutdowner cell.Shutdowner
	Module     cell.FullModuleID
}

// NewRegistry returns an empty registry. The hive provides one.
func NewRegistry() Registry {
	return &registry{groups: map[*group]struct{}{}}
}

type registry struct {
	mu     sync.Mutex
	groups map[*group]struct{}
}

func (r *registry) NewGroup(p GroupParams) Group {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	g := newGroup(p)
	r.mu.Lock()
	r.groups[g] = struct{}{}
	r.mu.Unlock()
	p.Lifecycle.Append(g)
	return g
}

func (r *registry) Controllers() []ControllerStatus {
	r.mu.Lock()
	groups := make([]*group, 0, len(r.groups))
	for g := range r.groups {
		groups = append(groups, g)
	}
	r.mu.Unlock()
	var out []ControllerStatus
	for _, g := range groups {
		out = append(out, g.controllerStatuses()...)
	}
	slices.SortFunc(out, func(a, b ControllerStatus) int {
		if c := strings.Compare(a.Module, b.Module); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// ModuleGroupParams are the dependencies of NewModuleGroup.
type ModuleGroupParams struct {
	cell.In

	Registry   Registry
	Health     cell.Health
	Lifecycle  cell.Lifecycle
	Logger     *slog.Logger
	Shutdowner cell.Shutdowner
	Module     cell.FullModuleID
}

// NewModuleGroup creates the job group of one module. The hive provides it
// privately in every module, so a cell just asks for a job.Group.
func NewModuleGroup(p ModuleGroupParams) Group {
	return p.Registry.NewGroup(GroupParams{
		Health:     p.Health,
		Lifecycle:  p.Lifecycle,
		Logger:     p.Logger,
		Shutdowner: p.Shutdowner,
		Module:     p.Module,
	})
}
