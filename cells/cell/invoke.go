package cell

import (
	"fmt"
	"time"
)

// Invoke registers functions that run when the hive is populated, in the
// order they were declared. Invokes are what pull constructors in: a
// provider nothing depends on is never built.
func Invoke(fns ...any) Cell {
	return &invoke{fns: fns}
}

type invoke struct {
	fns []any
}

// Invoker is one registered invoke function, bound to its scope.
type Invoker struct {
	scope    *Scope
	fn       any
	Name     string
	Module   FullModuleID
	Duration time.Duration
}

// Run calls the function through dig and records how long it took.
func (i *Invoker) Run() error {
	start := time.Now()
	err := i.scope.dig.Invoke(i.fn)
	i.Duration = time.Since(start)
	if err != nil {
		return fmt.Errorf("invoke %s in module %q: %w", i.Name, i.Module, err)
	}
	return nil
}

func (iv *invoke) Apply(s *Scope) error {
	for _, fn := range iv.fns {
		if err := checkFunc(fn); err != nil {
			return fmt.Errorf("invoke in module %q: %w", s.module, err)
		}
		s.root.invokes = append(s.root.invokes, &Invoker{
			scope:  s,
			fn:     fn,
			Name:   FuncName(fn),
			Module: s.module,
		})
	}
	return nil
}

func (iv *invoke) Info(*Scope) *InfoNode {
	n := &InfoNode{}
	for _, fn := range iv.fns {
		ins, _ := FuncSignature(fn)
		n.Children = append(n.Children, &InfoNode{
			Header: "invoke " + FuncName(fn),
			Lines:  []string{"⇨ " + joinOrNone(ins)},
		})
	}
	return n
}
