package job_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture is a job group outside a hive: its own lifecycle, health tree
// and shutdowner. Create it inside the synctest bubble of the test.
type fixture struct {
	group    job.Group
	lc       *cell.DefaultLifecycle
	health   *cell.HealthTree
	shutdown *fakeShutdowner
	t        *testing.T
}

func newFixture(t *testing.T, module ...string) *fixture {
	t.Helper()
	f := &fixture{
		lc:       &cell.DefaultLifecycle{},
		health:   cell.NewHealthTree(nil),
		shutdown: &fakeShutdowner{},
		t:        t,
	}
	f.group = f.newGroup(module...)
	return f
}

// newGroup adds another group to the fixture's lifecycle.
func (f *fixture) newGroup(module ...string) job.Group {
	return job.NewGroup(job.GroupParams{
		Health:     f.health.Root(),
		Lifecycle:  f.lc,
		Logger:     celltest.Logger(f.t),
		Shutdowner: f.shutdown,
		Module:     cell.FullModuleID(module),
	})
}

// start starts the lifecycle. Tests defer stop right after: cleanups of
// a synctest bubble run only after its goroutines have exited, too late
// to stop the jobs. Stopping twice is harmless.
func (f *fixture) start() {
	f.t.Helper()
	if err := f.lc.Start(context.Background(), celltest.Logger(f.t), stopContext); err != nil {
		f.t.Fatalf("start: %v", err)
	}
}

// stop stops the lifecycle and fails the test on error.
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

func stopContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

// fakeShutdowner records shutdown requests.
type fakeShutdowner struct {
	mu   sync.Mutex
	errs []error
}

var _ cell.Shutdowner = (*fakeShutdowner)(nil)

func (s *fakeShutdowner) Shutdown(opts ...cell.ShutdownOption) {
	var req cell.ShutdownRequest
	for _, o := range opts {
		o(&req)
	}
	s.mu.Lock()
	s.errs = append(s.errs, req.Err)
	s.mu.Unlock()
}

func (s *fakeShutdowner) requests() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// clock records the fake-clock offsets (from the bubble's start) at
// which something happened.
type clock struct {
	start time.Time
	mu    sync.Mutex
	at    []time.Duration
}

func newClock() *clock { return &clock{start: time.Now()} }

func (c *clock) record() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = append(c.at, time.Since(c.start))
	return len(c.at)
}

func (c *clock) times() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.at...)
}

func (c *clock) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.at)
}

func secs(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

// inBubble runs fn as subtest name inside a synctest bubble: time is fake
// and advances only when every goroutine of the bubble is blocked.
func inBubble(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) { synctest.Test(t, fn) })
}
