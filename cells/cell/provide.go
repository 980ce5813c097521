package cell

import (
	"fmt"

	"go.uber.org/dig"
)

// Provide registers constructors whose results are visible to the whole
// hive. Constructors run lazily, the first time something needs their
// result; they should validate and allocate only, and append lifecycle
// hooks for anything that does I/O or starts goroutines.
func Provide(ctors ...any) Cell {
	return &provider{ctors: ctors, export: true}
}

// ProvidePrivate registers constructors whose results are visible only
// inside the enclosing module and its child modules.
func ProvidePrivate(ctors ...any) Cell {
	return &provider{ctors: ctors, export: false}
}

type provider struct {
	ctors  []any
	export bool
}

func (p *provider) Apply(s *Scope) error {
	for _, ctor := range p.ctors {
		fn, opts := ctor, []dig.ProvideOption{dig.Export(p.export)}
		if s.local != nil {
			var loc []dig.ProvideOption
			fn, loc = s.local.wrap(ctor)
			opts = append(opts, loc...)
		}
		if err := s.dig.Provide(fn, opts...); err != nil {
			return fmt.Errorf("provide %s in module %q: %w", FuncName(ctor), s.module, err)
		}
	}
	return nil
}

func (p *provider) Info(*Scope) *InfoNode {
	n := &InfoNode{}
	kind := "provide"
	if !p.export {
		kind = "provide-private"
	}
	for _, ctor := range p.ctors {
		ins, outs := FuncSignature(ctor)
		n.Children = append(n.Children, &InfoNode{
			Header: fmt.Sprintf("%s %s", kind, FuncName(ctor)),
			Lines:  []string{"⇨ " + joinOrNone(ins), "⇦ " + joinOrNone(outs)},
		})
	}
	return n
}
