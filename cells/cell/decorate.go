package cell

import "fmt"

// Decorate wraps objects for the given cells only: the decorator takes
// objects of some types and returns replacements of the same types, and the
// cells (and nothing outside them) see the replacements. A typical use is
// wrapping a service with extra behaviour in a test.
func Decorate(decorator any, cells ...Cell) Cell {
	return &decorate{fn: decorator, cells: cells}
}

type decorate struct {
	fn    any
	cells []Cell
}

func (d *decorate) Apply(s *Scope) error {
	if err := checkFunc(d.fn); err != nil {
		return fmt.Errorf("decorate in module %q: %w", s.module, err)
	}
	// An unnamed dig scope keeps the decoration away from siblings while
	// the module id (and so logs and health) stay those of the parent.
	child := &Scope{dig: s.dig.Scope("decorate"), root: s.root, module: s.module}
	if err := child.dig.Decorate(d.fn); err != nil {
		return fmt.Errorf("decorate %s in module %q: %w", FuncName(d.fn), s.module, err)
	}
	for _, c := range d.cells {
		if err := c.Apply(child); err != nil {
			return err
		}
	}
	return nil
}

func (d *decorate) Info(s *Scope) *InfoNode {
	ins, outs := FuncSignature(d.fn)
	n := &InfoNode{
		Header: "decorate " + FuncName(d.fn),
		Lines:  []string{"⇨ " + joinOrNone(ins), "⇦ " + joinOrNone(outs)},
	}
	for _, c := range d.cells {
		n.Children = append(n.Children, c.Info(s))
	}
	return n
}
