package api

import (
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
)

// hiveTree combines the module list (declaration order) with the health
// tree: every module gets the aggregated level of its health node, its own
// report, and the health scopes below it that are not modules.
func hiveTree(modules []cell.ModuleInfo, root *cell.HealthNode) *models.Hive {
	out := &models.Hive{Level: models.Level(root.Level), Modules: []*models.Module{}}
	byID := map[string]*models.Module{}
	isModule := moduleIndex(modules)
	for _, mi := range modules {
		id := mi.ID.String()
		m := &models.Module{ID: id, Name: mi.ID[len(mi.ID)-1], Title: mi.Title, Level: models.LevelUnknown}
		byID[id] = m
		if parent, ok := byID[mi.ID[:len(mi.ID)-1].String()]; ok && len(mi.ID) > 1 {
			parent.Modules = append(parent.Modules, m)
		} else {
			out.Modules = append(out.Modules, m)
		}
		node := findNode(root, mi.ID)
		if node == nil {
			continue
		}
		m.Level = models.Level(node.Level)
		if reported(node) {
			m.Message, m.Error, m.Since = node.Message, node.Error, timePtr(node.Since)
		}
		for _, c := range node.Children {
			if _, ok := isModule[c.ID]; !ok {
				m.Scopes = append(m.Scopes, healthScope(c))
			}
		}
	}
	for _, c := range root.Children {
		if _, ok := isModule[c.ID]; !ok {
			out.Scopes = append(out.Scopes, healthScope(c))
		}
	}
	return out
}

// moduleIndex returns the set of full module ids.
func moduleIndex(modules []cell.ModuleInfo) map[string]struct{} {
	out := make(map[string]struct{}, len(modules))
	for _, m := range modules {
		out[m.ID.String()] = struct{}{}
	}
	return out
}

// findNode walks the health tree along a module id.
func findNode(root *cell.HealthNode, id cell.FullModuleID) *cell.HealthNode {
	n := root
	for _, part := range id {
		var next *cell.HealthNode
		for _, c := range n.Children {
			if c.Name == part {
				next = c
				break
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

func healthScope(n *cell.HealthNode) *models.HealthScope {
	s := &models.HealthScope{ID: n.ID, Name: n.Name, Level: models.Level(n.Level)}
	if reported(n) {
		s.Message, s.Error = n.Message, n.Error
		s.Since, s.Updated = timePtr(n.Since), timePtr(n.Updated)
	}
	for _, c := range n.Children {
		s.Children = append(s.Children, healthScope(c))
	}
	return s
}

// reported tells whether a node reported itself (and is not only the
// parent of scopes that did).
func reported(n *cell.HealthNode) bool { return !n.Updated.IsZero() }

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
