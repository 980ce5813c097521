package hive

import (
	"fmt"
	"io"

	"go.uber.org/dig"

	"github.com/apiary-net/apiary/cells/cell"
)

// Print populates the hive (without starting it) and writes the module
// tree with every provider (inputs ⇨ outputs), invoke and config value,
// then the start hooks in the order they will run.
func (h *Hive) Print(w io.Writer) error {
	if err := h.Populate(); err != nil {
		return err
	}
	fmt.Fprintln(w, "Cells:")
	for _, c := range h.cells {
		c.Info(h.scope).Write(w, 1)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Start hooks:")
	hooks := h.lifecycle.Hooks()
	n := 0
	for _, hk := range hooks {
		if hk.StartName != "" {
			n++
			fmt.Fprintf(w, "  %d. %s%s\n", n, hk.StartName, moduleSuffix(hk.Module))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Stop hooks:")
	n = 0
	for i := len(hooks) - 1; i >= 0; i-- {
		if hk := hooks[i]; hk.StopName != "" {
			n++
			fmt.Fprintf(w, "  %d. %s%s\n", n, hk.StopName, moduleSuffix(hk.Module))
		}
	}
	if len(h.unknownFiles) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Ignored --config-dir files (no such flag): %v\n", h.unknownFiles)
	}
	return nil
}

func moduleSuffix(m cell.FullModuleID) string {
	if len(m) == 0 {
		return ""
	}
	return " [" + m.String() + "]"
}

// PrintDot populates the hive and writes its dependency graph in DOT
// format (render it with `dot -Tsvg`).
func (h *Hive) PrintDot(w io.Writer) error {
	if err := h.Populate(); err != nil {
		return err
	}
	return dig.Visualize(h.container, w)
}
