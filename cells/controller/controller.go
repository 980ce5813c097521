package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
)

// controller is one named controller and its goroutine.
type controller struct {
	name   string
	health cell.Health
	wake   chan struct{}

	mu     sync.Mutex
	params Params
	status models.ControllerStatus
	cancel context.CancelFunc
	done   chan struct{}
}

func newController(name, module string, health cell.Health, p Params) *controller {
	return &controller{
		name:   name,
		health: health,
		wake:   make(chan struct{}, 1),
		params: p,
		status: models.ControllerStatus{Name: name, Module: module, RunInterval: intervalString(p.RunInterval)},
	}
}

// update replaces the parameters and asks for a run.
func (c *controller) update(p Params) {
	c.mu.Lock()
	c.params = p
	c.status.RunInterval = intervalString(p.RunInterval)
	c.mu.Unlock()
	c.poke()
}

func (c *controller) statusCopy() models.ControllerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
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

// halt cancels the goroutine and waits for it (if it was started).
func (c *controller) halt() {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
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

// errorRetryJitter is the jitter of the error backoff (zero:
// job.DefaultJitter); tests that check the schedule turn it off.
var errorRetryJitter float64

// errorBackoff is the wait after failures consecutive failures: from
// ErrorRetryBaseDuration doubling up to MaxRetryInterval, with jitter so
// that the agents of a cluster do not retry a shared server in lockstep.
func errorBackoff(p Params, failures int) time.Duration {
	maxD := p.MaxRetryInterval
	if maxD <= 0 {
		maxD = max(time.Minute, p.RunInterval)
	}
	return job.Backoff{Min: p.ErrorRetryBaseDuration, Max: maxD, Factor: 2, Jitter: errorRetryJitter}.Duration(failures)
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
