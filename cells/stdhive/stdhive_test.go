package stdhive_test

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/stdhive"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestNewGivesEachModuleItsOwn checks that two modules get distinct job
// groups and controller managers, and that providers given in the
// options are kept.
func TestNewGivesEachModuleItsOwn(t *testing.T) {
	type extra struct{ module cell.ModuleID }
	type got struct {
		group job.Group
		mgr   controller.Manager
		extra *extra
	}
	var a, b got
	module := func(id string, into *got) cell.Cell {
		return cell.Module(id, "A module", cell.Invoke(func(g job.Group, m controller.Manager, e *extra) {
			*into = got{g, m, e}
		}))
	}
	h := stdhive.New(hive.Options{
		Logger:                 slog.New(slog.DiscardHandler),
		ModulePrivateProviders: []any{func(id cell.ModuleID) *extra { return &extra{id} }},
	}, controller.Cell, module("a", &a), module("b", &b))
	if err := h.Populate(); err != nil {
		t.Fatalf("populate: %v", err)
	}
	if a.group == nil || a.mgr == nil || a.group == b.group || a.mgr == b.mgr {
		t.Errorf("groups %p, %p and managers %p, %p: want one of each per module", a.group, b.group, a.mgr, b.mgr)
	}
	if a.extra == nil || a.extra.module != "a" || b.extra == nil || b.extra.module != "b" {
		t.Errorf("option's providers gave %+v and %+v, want each module's id", a.extra, b.extra)
	}
}
