package cell

import (
	"go.uber.org/dig"
)

// Cell is one building block of a hive. Cells are immutable values: the
// same cell may be applied to many hives (tests do this all the time).
type Cell interface {
	// Apply registers the cell with the scope: providers, invokes,
	// decorators, flags.
	Apply(s *Scope) error

	// Info describes the cell for hive.Print.
	Info(s *Scope) *InfoNode
}

// In marks a parameter struct whose fields are injected one by one.
// Use it when a constructor needs more than two dependencies.
type In = dig.In

// Out marks a result struct whose fields are provided one by one. Use it
// for value groups (`group:"name"` tags) such as API handlers or metrics.
type Out = dig.Out

// digScope is the subset of dig's Container and Scope that cells use.
type digScope interface {
	Provide(ctor any, opts ...dig.ProvideOption) error
	Decorate(fn any, opts ...dig.DecorateOption) error
	Invoke(fn any, opts ...dig.InvokeOption) error
	Scope(name string, opts ...dig.ScopeOption) *dig.Scope
}

var (
	_ digScope = (*dig.Container)(nil)
	_ digScope = (*dig.Scope)(nil)
)
