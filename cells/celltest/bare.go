package celltest

import (
	"context"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
)

// Bare is a lifecycle and a health tree outside any hive, for tests of
// the framework's own pieces (job groups, controller managers). In a
// synctest bubble, create it inside the bubble.
type Bare struct {
	Lifecycle *cell.DefaultLifecycle
	Health    *cell.HealthTree
	t         testing.TB
}

// NewBare returns an empty lifecycle and health tree.
func NewBare(t testing.TB) *Bare {
	return &Bare{Lifecycle: &cell.DefaultLifecycle{}, Health: cell.NewHealthTree(nil), t: t}
}

// Start runs the start hooks, failing the test on error. Tests defer
// Stop right after: cleanups of a synctest bubble run only after its
// goroutines have exited, too late to stop them. Stopping twice is
// harmless.
func (b *Bare) Start() {
	b.t.Helper()
	stopCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), time.Minute)
	}
	if err := b.Lifecycle.Start(context.Background(), Logger(b.t), stopCtx); err != nil {
		b.t.Fatalf("start: %v", err)
	}
}

// Stop runs the stop hooks, failing the test on error.
func (b *Bare) Stop() {
	b.t.Helper()
	if err := b.StopErr(context.Background()); err != nil {
		b.t.Errorf("stop: %v", err)
	}
}

// StopErr runs the stop hooks within ctx and returns their error.
func (b *Bare) StopErr(ctx context.Context) error {
	return b.Lifecycle.Stop(ctx, Logger(b.t))
}

// HealthOf returns the health status of scope id; ok is false when the
// scope never reported or was closed.
func (b *Bare) HealthOf(id string) (cell.HealthStatus, bool) {
	for _, st := range b.Health.All() {
		if st.ID == id {
			return st, true
		}
	}
	return cell.HealthStatus{}, false
}

// WantHealth fails the test unless scope id reports level, message and
// error text.
func (b *Bare) WantHealth(id string, level cell.Level, message, errText string) {
	b.t.Helper()
	st, ok := b.HealthOf(id)
	if !ok {
		b.t.Fatalf("health %q: no report, want %s %q", id, level, message)
	}
	if st.Level != level || st.Message != message || st.Error != errText {
		b.t.Fatalf("health %q = %s %q (error %q), want %s %q (error %q)",
			id, st.Level, st.Message, st.Error, level, message, errText)
	}
}
