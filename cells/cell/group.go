package cell

// Group bundles cells without creating a module scope: what the cells
// provide is visible exactly as if they had been listed one by one.
func Group(cells ...Cell) Cell {
	return group(cells)
}

type group []Cell

func (g group) Apply(s *Scope) error {
	for _, c := range g {
		if err := c.Apply(s); err != nil {
			return err
		}
	}
	return nil
}

func (g group) Info(s *Scope) *InfoNode {
	n := &InfoNode{}
	for _, c := range g {
		n.Children = append(n.Children, c.Info(s))
	}
	return n
}
