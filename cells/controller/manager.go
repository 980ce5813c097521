package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
)

// Manager owns the named controllers of one module.
type Manager interface {
	// Update creates the named controller or replaces its parameters
	// and runs it again at once.
	Update(name string, p Params)
	// Remove stops the named controller, waits for it to exit and runs
	// its StopFunc. It must not be called from the controller's own
	// DoFunc.
	Remove(name string) error
	// Trigger runs the named controller now; an unknown name is ignored.
	Trigger(name string)
}

// ErrNoController is returned for an unknown controller name.
var ErrNoController = errors.New("no such controller")

// removeStopTimeout bounds a StopFunc run by Remove.
const removeStopTimeout = time.Minute

// ManagerParams are what a manager needs from its module.
type ManagerParams struct {
	Health    cell.Health
	Lifecycle cell.Lifecycle
	Logger    *slog.Logger
	Module    cell.FullModuleID
}

type manager struct {
	params ManagerParams

	mu          sync.Mutex
	ctx         context.Context
	cancel      context.CancelFunc
	started     bool
	stopped     bool
	controllers map[string]*controller
	wg          sync.WaitGroup
}

var (
	_ Manager            = (*manager)(nil)
	_ cell.HookInterface = (*manager)(nil)
)

func (m *manager) Update(name string, p Params) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		m.params.Logger.Warn("Controller updated after stop, ignoring", "controller", name)
		return
	}
	if c, ok := m.controllers[name]; ok {
		c.update(p)
		return
	}
	c := newController(name, m.params.Module.String(), m.params.Health.NewScope("controller-"+name), p)
	m.controllers[name] = c
	if m.started {
		c.start(m.ctx, &m.wg)
	}
}

func (m *manager) Trigger(name string) {
	m.mu.Lock()
	c := m.controllers[name]
	m.mu.Unlock()
	if c != nil {
		c.poke()
	}
}

func (m *manager) Remove(name string) error {
	m.mu.Lock()
	c, ok := m.controllers[name]
	delete(m.controllers, name)
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("remove controller %q: %w", name, ErrNoController)
	}
	c.halt()
	ctx, cancel := context.WithTimeout(context.Background(), removeStopTimeout)
	defer cancel()
	err := c.runStopFunc(ctx)
	c.health.Close()
	return err
}

// statuses returns the status of every controller of the module.
func (m *manager) statuses() []models.ControllerStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]models.ControllerStatus, 0, len(m.controllers))
	for _, c := range m.controllers {
		out = append(out, c.statusCopy())
	}
	return out
}

// Start starts the controllers created so far. Their context is the
// manager's own, not the start hook's.
func (m *manager) Start(cell.HookContext) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.started = true
	for _, c := range m.controllers {
		c.start(m.ctx, &m.wg)
	}
	return nil
}

// Stop cancels every controller and waits for them, within ctx, then
// runs their StopFuncs in name order and returns all their errors.
func (m *manager) Stop(ctx cell.HookContext) error {
	m.mu.Lock()
	m.stopped = true
	cancel := m.cancel
	ctrls := make([]*controller, 0, len(m.controllers))
	for _, c := range m.controllers {
		ctrls = append(ctrls, c)
	}
	m.controllers = map[string]*controller{}
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("controllers of module %q did not stop in time: %w", m.params.Module, context.Cause(ctx))
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
