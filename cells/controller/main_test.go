package controller_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/controller"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var errUnreachable = errors.New("etcd unreachable")

// fixture is a controller manager outside a hive: its own registry,
// lifecycle and health tree. Create it inside the synctest bubble.
type fixture struct {
	*celltest.Bare
	registry controller.Registry
	mgr      controller.Manager
	t        *testing.T
}

func newFixture(t *testing.T, module ...string) *fixture {
	t.Helper()
	f := &fixture{Bare: celltest.NewBare(t), registry: controller.NewRegistry(), t: t}
	f.mgr = f.newManager(module...)
	return f
}

// newManager adds another manager to the fixture's registry and lifecycle.
func (f *fixture) newManager(module ...string) controller.Manager {
	return f.registry.NewManager(controller.ManagerParams{
		Health:    f.Health.Root(),
		Lifecycle: f.Lifecycle,
		Logger:    celltest.Logger(f.t),
		Module:    cell.FullModuleID(module),
	})
}

// controllerStatus returns the status of the named controller from the
// registry's listing.
func (f *fixture) controllerStatus(name string) models.ControllerStatus {
	f.t.Helper()
	for _, st := range f.registry.Controllers() {
		if st.Name == name {
			return st
		}
	}
	f.t.Fatalf("controller %q not listed in %+v", name, f.registry.Controllers())
	return models.ControllerStatus{}
}

// failingDo returns a DoFunc that records its runs and fails those for
// which fail returns true (given the 1-based run number).
func failingDo(runs *celltest.Clock, fail func(n int) bool) func(context.Context) error {
	return func(context.Context) error {
		if fail(runs.Record()) {
			return errUnreachable
		}
		return nil
	}
}

func never(int) bool  { return false }
func always(int) bool { return true }
