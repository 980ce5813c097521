package job_test

import (
	"sync"
	"testing"

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
	*celltest.Bare
	group    job.Group
	shutdown *fakeShutdowner
	t        *testing.T
}

func newFixture(t *testing.T, module ...string) *fixture {
	t.Helper()
	f := &fixture{Bare: celltest.NewBare(t), shutdown: &fakeShutdowner{}, t: t}
	f.group = f.newGroup(module...)
	return f
}

// newGroup adds another group to the fixture's lifecycle.
func (f *fixture) newGroup(module ...string) job.Group {
	return job.NewGroup(job.GroupParams{
		Health:     f.Health.Root(),
		Lifecycle:  f.Lifecycle,
		Logger:     celltest.Logger(f.t),
		Shutdowner: f.shutdown,
		Module:     cell.FullModuleID(module),
	})
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
