package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/cells/cell"
)

// Group owns the jobs and controllers of one module.
type Group interface {
	// Add runs jobs: at hive start, or at once if the group has started.
	Add(jobs ...Job)
	// UpdateController creates the named controller or replaces its
	// parameters and runs it again at once.
	UpdateController(name string, params ControllerParams)
	// RemoveController stops the named controller, waits for it to exit
	// and runs its StopFunc. It must not be called from the controller's
	// own DoFunc.
	RemoveController(name string) error
	// TriggerController runs the named controller now.
	TriggerController(name string)
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

type group struct {
	params GroupParams

	mu          sync.Mutex
	ctx         context.Context
	cancel      context.CancelFunc
	started     bool
	stopped     bool
	pending     []Job
	controllers map[string]*controller
	wg          sync.WaitGroup
}

var (
	_ Group              = (*group)(nil)
	_ cell.HookInterface = (*group)(nil)
)

func newGroup(p GroupParams) *group {
	return &group{params: p, controllers: map[string]*controller{}}
}

func (g *group) Add(jobs ...Job) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.stopped:
		for _, j := range jobs {
			g.params.Logger.Warn("Job added after stop, not running it", "job", j.Name())
		}
	case g.started:
		for _, j := range jobs {
			g.startJobLocked(j)
		}
	default:
		g.pending = append(g.pending, jobs...)
	}
}

func (g *group) startJobLocked(j Job) {
	env := jobEnv{
		health:     g.params.Health.NewScope("job-" + j.Name()),
		log:        g.params.Logger.With("job", j.Name()),
		shutdowner: g.params.Shutdowner,
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		j.run(g.ctx, env)
	}()
}

// Start starts the pending jobs and controllers. The context of the jobs
// is the group's own, not the start hook's.
func (g *group) Start(cell.HookContext) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.started = true
	for _, j := range g.pending {
		g.startJobLocked(j)
	}
	g.pending = nil
	for _, c := range g.controllers {
		c.start(g.ctx, &g.wg)
	}
	return nil
}

// Stop cancels every job and controller and waits for them, within ctx,
// then runs the controllers' StopFuncs in name order and returns all their
// errors.
func (g *group) Stop(ctx cell.HookContext) error {
	g.mu.Lock()
	g.stopped = true
	cancel := g.cancel
	ctrls := make([]*controller, 0, len(g.controllers))
	for _, c := range g.controllers {
		ctrls = append(ctrls, c)
	}
	g.controllers = map[string]*controller{}
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("jobs of module %q did not stop in time: %w", g.params.Module, context.Cause(ctx))
	}
	slices.SortFunc(ctrls, func(a, b *controller) int { return strings.Compare(a.name, b.name) })
	var errs []error
	for _, c := range ctrls {
		if err := c.runStopFunc(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop controllers: %w", err)
	}
	return nil
}
