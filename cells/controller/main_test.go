package controller_test

import (
	"context"
	"errors"
	"testing"
	"time"

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
	registry controller.Registry
	mgr      controller.Manager
	lc       *cell.DefaultLifecycle
	health   *cell.HealthTree
	t        *testing.T
}

func newFixture(t *testing.T, module ...string) *fixture {
	t.Helper()
	f := &fixture{
		registry: controller.NewRegistry(),
		lc:       &cell.DefaultLifecycle{},
		health:   cell.NewHealthTree(nil),
		t:        t,
	}
	f.mgr = f.newManager(module...)
	return f
}

// newManager adds another manager to the fixture's registry and lifecycle.
func (f *fixture) newManager(module ...string) controller.Manager {
	return f.registry.NewManager(controller.ManagerParams{
		Health:    f.health.Root(),
		Lifecycle: f.lc,
		Logger:    celltest.Logger(f.t),
		Module:    cell.FullModuleID(module),
	})
}

// start starts the lifecycle; tests defer stop right after (stopping
// twice is harmless).
func (f *fixture) start() {
	f.t.Helper()
	stopCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), time.Minute)
	}
	if err := f.lc.Start(context.Background(), celltest.Logger(f.t), stopCtx); err != nil {
		f.t.Fatalf("start: %v", err)
	}
}

func (f *fixture) stop() {
	f.t.Helper()
	if err := f.stopErr(context.Background()); err != nil {
		f.t.Errorf("stop: %v", err)
	}
}

func (f *fixture) stopErr(ctx context.Context) error {
	return f.lc.Stop(ctx, celltest.Logger(f.t))
}

// healthOf returns the health status of scope id; ok is false when the
// scope never reported or was closed.
func (f *fixture) healthOf(id string) (cell.HealthStatus, bool) {
	for _, st := range f.health.All() {
		if st.ID == id {
			return st, true
		}
	}
	return cell.HealthStatus{}, false
}

// wantHealth fails the test unless scope id reports level and message.
func (f *fixture) wantHealth(id string, level cell.Level, message, errText string) {
	f.t.Helper()
	st, ok := f.healthOf(id)
	if !ok {
		f.t.Fatalf("health %q: no report, want %s %q", id, level, message)
	}
	if st.Level != level || st.Message != message || st.Error != errText {
		f.t.Fatalf("health %q = %s %q (error %q), want %s %q (error %q)",
			id, st.Level, st.Message, st.Error, level, message, errText)
	}
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
