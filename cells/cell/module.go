package cell

import (
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// ModuleID is the short, lower-case kebab id of one module ("api-server").
type ModuleID string

// FullModuleID is the path of module ids from the root ("agent.api-server").
type FullModuleID []string

// String returns the dotted form of the id.
func (f FullModuleID) String() string { return strings.Join(f, ".") }

// Append returns a new id with id appended; f is not modified.
func (f FullModuleID) Append(id string) FullModuleID {
	out := make(FullModuleID, 0, len(f)+1)
	out = append(out, f...)
	return append(out, id)
}

var moduleIDPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// Module groups cells under a named scope. What the cells Provide is
// visible to the whole hive; what they ProvidePrivate is visible only
// inside the module and its children. Each module gets its own logger
// (attribute module=<full id>), health scope, lifecycle (hooks carry the
// module id) and job group.
//
// The id must be lower-case kebab ("api-server"); a bad id is a programming
// error and panics.
func Module(id, title string, cells ...Cell) Cell {
	if !moduleIDPattern.MatchString(id) {
		panic(fmt.Sprintf("cell.Module: invalid id %q: want lower-case kebab, e.g. \"api-server\"", id))
	}
	if strings.TrimSpace(title) == "" {
		panic(fmt.Sprintf("cell.Module %q: empty title", id))
	}
	return &module{id: id, title: title, cells: cells}
}

type module struct {
	id    string
	title string
	cells []Cell
}

func (m *module) Apply(s *Scope) error {
	full := s.module.Append(m.id)
	s.root.modules = append(s.root.modules, ModuleInfo{ID: full, Title: m.title})

	need, known := requiredTypes(m.cells)
	wanted := func(t reflect.Type) bool { return !known || need[t] }
	decorators := m.decorators(s.root, full)
	if known {
		local := newModuleLocals(decorators)
		if m.canSkipScope(s.root, local, wanted) {
			return m.applyCells(&Scope{dig: s.dig, root: s.root, module: full, local: local})
		}
	}
	child := s.child(m.id)
	// Module-private providers first: what they take is needed too.
	for _, p := range s.root.modulePrivate {
		if !slices.ContainsFunc(funcResults(p), wanted) {
			continue
		}
		funcParams(p, func(t reflect.Type) { need[t] = true })
		if err := child.dig.Provide(p); err != nil {
			return fmt.Errorf("module %s: %w", full, err)
		}
	}
	for _, d := range decorators {
		if !wanted(d.typ) {
			continue
		}
		if err := child.dig.Decorate(d.fn); err != nil {
			return fmt.Errorf("module %s: %w", full, err)
		}
	}
	return m.applyCells(child)
}

func (m *module) applyCells(s *Scope) error {
	for _, c := range m.cells {
		if err := c.Apply(s); err != nil {
			return err
		}
	}
	return nil
}

// decorators scope the hive-wide objects to the module. None depends on
// the parent module's decoration, so each is registered only where asked
// for.
func (m *module) decorators(root *Root, full FullModuleID) []moduleDecorator {
	return []moduleDecorator{
		decorator(func(FullModuleID) FullModuleID { return full }),
		decorator(func(ModuleID) ModuleID { return ModuleID(m.id) }),
		decorator(func(log *slog.Logger) *slog.Logger {
			if root.logger != nil {
				log = root.logger()
			}
			return log.With("module", full.String())
		}),
		decorator(func(h Health) Health {
			if root.health != nil {
				return root.health().NewScope(full.String())
			}
			return h.NewScope(m.id)
		}),
		decorator(func(lc Lifecycle) Lifecycle { return moduleLifecycle{parent: lc, module: full} }),
	}
}

func (m *module) Info(s *Scope) *InfoNode {
	child := &Scope{root: s.root, module: s.module.Append(m.id)}
	n := &InfoNode{Header: fmt.Sprintf("module %s: %s", m.id, m.title)}
	for _, c := range m.cells {
		n.Children = append(n.Children, c.Info(child))
	}
	return n
}
