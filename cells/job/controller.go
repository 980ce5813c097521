package job

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
)

// ControllerParams describe what a controller does and how often.
type ControllerParams struct {
	// DoFunc is run at once, then every RunInterval, and retried with
	// backoff on error.
	DoFunc func(ctx context.Context) error
	// StopFunc, if set, runs once when the controller is removed or its
	// group stops.
	StopFunc func(ctx context.Context) error
	// RunInterval is the time between successful runs; 0 runs once (and
	// again on UpdateController or TriggerController).
	RunInterval time.Duration
	// ErrorRetryBaseDuration is the first wait after a failure (default
	// 1s); it doubles with each consecutive failure.
	ErrorRetryBaseDuration time.Duration
	// MaxRetryInterval caps the error backoff (default 1m, or RunInterval
	// when that is larger).
	MaxRetryInterval time.Duration
	// NoErrorRetry disables the error backoff: a failed run waits for the
	// next RunInterval like a successful one.
	NoErrorRetry bool
}

// ControllerStatus is what `apiary status --all-controllers` shows.
type ControllerStatus struct {
	Name                string     `json:"name"`
	Module              string     `json:"module"`
	RunInterval         string     `json:"run-interval,omitempty"`
	Runs                int        `json:"runs"`
	SuccessCount        int        `json:"success-count"`
	FailureCount        int        `json:"failure-count"`
	ConsecutiveFailures int        `json:"consecutive-failure-count"`
	LastSuccess         *time.Time `json:"last-success,omitempty"`
	LastFailure         *time.Time `json:"last-failure,omitempty"`
	LastError           string     `json:"last-error,omitempty"`
}

// ErrNoController is returned for an unknown controller name.
var ErrNoController = errors.New("no such controller")

type controller struct {
	name   string
	health cell.Health
	wake   chan struct{}

	mu     sync.Mutex
	params ControllerParams
	status ControllerStatus
	cancel context.CancelFunc
	done   chan struct{}
}

func (g *group) UpdateController(name string, p ControllerParams) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		g.params.Logger.Warn("Controller updated after stop, ignoring", "controller", name)
		return
	}
	if c, ok := g.controllers[name]; ok {
		c.mu.Lock()
		c.params = p
		c.status.RunInterval = intervalString(p.RunInterval)
		c.mu.Unlock()
		c.poke()
		return
	}
	c := &controller{
		name:   name,
		health: g.params.Health.NewScope("controller-" + name),
		wake:   make(chan struct{}, 1),
		params: p,
		status: ControllerStatus{Name: name, Module: g.params.Module.String(), RunInterval: intervalString(p.RunInterval)},
	}
	g.controllers[name] = c
	if g.started {
		c.start(g.ctx, &g.wg)
	}
}

func (g *group) TriggerController(name string) {
	g.mu.Lock()
	c := g.controllers[name]
	g.mu.Unlock()
	if c != nil {
		c.poke()
	}
}

func (g *group) RemoveController(name string) error {
	g.mu.Lock()
	c, ok := g.controllers[name]
	delete(g.controllers, name)
	g.mu.Unlock()
	if !ok {
		return fmt.Errorf("remove controller %q: %w", name, ErrNoController)
	}
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	err := c.runStopFunc(ctx)
	c.health.Close()
	return err
}

func (g *group) controllerStatuses() []ControllerStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]ControllerStatus, 0, len(g.controllers))
	for _, c := range g.controllers {
		c.mu.Lock()
		out = append(out, c.status)
		c.mu.Unlock()
	}
	return out
}

func (c *controller) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *controller) start(ctx context.Context, wg *sync.WaitGroup) {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.cancel, c.done = cancel, make(chan struct{})
	done := c.done
	c.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		c.loop(ctx)
	}()
}

func (c *controller) loop(ctx context.Context) {
	wait := time.NewTimer(time.Hour)
	wait.Stop()
	defer wait.Stop()
	for {
		// This run answers the updates and triggers that came before it
		// (at start, or with the timer): only those during the run ask
		// for another.
		select {
		case <-c.wake:
		default:
		}
		next, ok := c.runOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		var fire <-chan time.Time
		if ok {
			wait.Reset(next)
			fire = wait.C
		}
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
			wait.Stop()
		case <-fire:
		}
		if ctx.Err() != nil {
			return // a trigger or the timer raced with stop
		}
	}
}

// runOnce runs DoFunc, records the outcome and returns how long to wait
// before the next run (ok=false: wait for an update or trigger).
func (c *controller) runOnce(ctx context.Context) (time.Duration, bool) {
	c.mu.Lock()
	p := c.params
	c.mu.Unlock()
	err := errors.New("controller has no DoFunc")
	if p.DoFunc != nil {
		err = p.DoFunc(ctx)
	}
	if ctx.Err() != nil {
		return 0, false
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status.Runs++
	if err == nil {
		c.status.SuccessCount++
		c.status.ConsecutiveFailures = 0
		c.status.LastSuccess = &now
		c.health.OK(fmt.Sprintf("run %d succeeded", c.status.Runs))
		return p.RunInterval, p.RunInterval > 0
	}
	c.status.FailureCount++
	c.status.ConsecutiveFailures++
	c.status.LastFailure = &now
	c.status.LastError = err.Error()
	c.health.Degraded(fmt.Sprintf("%d consecutive failure(s)", c.status.ConsecutiveFailures), err)
	if p.NoErrorRetry {
		return p.RunInterval, p.RunInterval > 0
	}
	return errorBackoff(p, c.status.ConsecutiveFailures), true
}

func errorBackoff(p ControllerParams, failures int) time.Duration {
	maxD := p.MaxRetryInterval
	if maxD <= 0 {
		maxD = max(time.Minute, p.RunInterval)
	}
	return Backoff{Min: p.ErrorRetryBaseDuration, Max: maxD, Factor: 2}.Duration(failures)
}

func (c *controller) runStopFunc(ctx context.Context) error {
	c.mu.Lock()
	stop := c.params.StopFunc
	c.mu.Unlock()
	if stop == nil {
		return nil
	}
	if err := stop(ctx); err != nil {
		return fmt.Errorf("controller %s: stop: %w", c.name, err)
	}
	return nil
}

func intervalString(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}
