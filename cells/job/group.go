package job

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/apiary-net/apiary/cells/cell"
)

// Group owns the jobs of one module.
type Group interface {
	// Add runs jobs. A job added before the hive starts (in a
	// constructor) is appended to the lifecycle as a hook of its own, so
	// it starts after the hooks appended before it and stops before
	// them; a job added once the group has started (from a start hook or
	// later) runs at once and stops with the group.
	Add(jobs ...Job)
}

// Job is a goroutine owned by a group. Create jobs with OneShot, Timer
// and NewTrigger.
type Job interface {
	// Name identifies the job in logs and in the health tree.
	Name() string
	run(ctx context.Context, env jobEnv)
}

// jobEnv is what a running job gets from its group.
type jobEnv struct {
	health     cell.Health
	log        *slog.Logger
	shutdowner cell.Shutdowner
}

// GroupParams are what a group needs from its module.
type GroupParams struct {
	Health     cell.Health
	Lifecycle  cell.Lifecycle
	Logger     *slog.Logger
	Shutdowner cell.Shutdowner
	Module     cell.FullModuleID
}

// group is a module's jobs. Its own hook, appended when it is created
// (before any of its jobs), opens the context of its jobs at start and,
// at stop, ends the jobs that were added after start.
type group struct {
	params GroupParams

	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	started bool
	stopped bool
	running sync.WaitGroup // jobs added after start
}

var (
	_ Group              = (*group)(nil)
	_ cell.HookInterface = (*group)(nil)
)

// NewGroup creates a group whose jobs start and stop with p.Lifecycle.
func NewGroup(p GroupParams) Group {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	g := &group{params: p}
	p.Lifecycle.Append(g)
	return g
}

func (g *group) Add(jobs ...Job) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, j := range jobs {
		switch {
		case g.stopped:
			g.params.Logger.Warn("Job added after stop, not running it", "job", j.Name())
		case g.started:
			g.running.Add(1)
			g.launch(g.ctx, j, g.running.Done)
		default:
			g.params.Lifecycle.Append(&jobHook{group: g, job: j})
		}
	}
}

// launch runs j in a goroutine with ctx and calls done when it returns.
func (g *group) launch(ctx context.Context, j Job, done func()) {
	env := jobEnv{
		health:     g.params.Health.NewScope("job-" + j.Name()),
		log:        g.params.Logger.With("job", j.Name()),
		shutdowner: g.params.Shutdowner,
	}
	go func() {
		defer done()
		j.run(ctx, env)
	}()
}

// Start opens the context of the group's jobs (not the start hook's).
func (g *group) Start(cell.HookContext) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.started = true
	return nil
}

// Stop cancels every job of the group and waits, within ctx, for those
// added after start (the others have stopped in their own hooks).
func (g *group) Stop(ctx cell.HookContext) error {
	g.mu.Lock()
	g.stopped = true
	cancel := g.cancel
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return waitWithin(ctx, &g.running, func() string {
		return fmt.Sprintf("jobs of module %q", g.params.Module)
	})
}

// jobHook is the lifecycle hook of a job added before start.
type jobHook struct {
	group  *group
	job    Job
	cancel context.CancelFunc
	done   sync.WaitGroup
}

var _ cell.HookInterface = (*jobHook)(nil)

// Start runs the job with a context of its own, below the group's.
func (h *jobHook) Start(cell.HookContext) error {
	g := h.group
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped || g.ctx == nil {
		return fmt.Errorf("start job %s of module %q: its group is not running", h.job.Name(), g.params.Module)
	}
	var ctx context.Context
	ctx, h.cancel = context.WithCancel(g.ctx)
	h.done.Add(1)
	g.launch(ctx, h.job, h.done.Done)
	return nil
}

// Stop cancels the job and waits for it within ctx.
func (h *jobHook) Stop(ctx cell.HookContext) error {
	if h.cancel != nil {
		h.cancel()
	}
	return waitWithin(ctx, &h.done, func() string {
		return fmt.Sprintf("job %s of module %q", h.job.Name(), h.group.params.Module)
	})
}

// waitWithin waits for wg until ctx ends; what names the waited-for
// goroutines in the error.
func waitWithin(ctx context.Context, wg *sync.WaitGroup, what func() string) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s did not stop in time: %w", what(), context.Cause(ctx))
	}
}
