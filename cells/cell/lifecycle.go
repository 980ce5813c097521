package cell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"
)

// HookContext is the context given to start and stop hooks. It is
// cancelled when the start or stop timeout passes; hooks must not keep it
// (start goroutines with their own context, cancelled in the stop hook).
type HookContext context.Context

// HookInterface is anything with start and stop methods.
type HookInterface interface {
	Start(HookContext) error
	Stop(HookContext) error
}

// Hook is a pair of optional start and stop functions.
type Hook struct {
	OnStart func(HookContext) error
	OnStop  func(HookContext) error
}

// Start calls OnStart if set.
func (h Hook) Start(ctx HookContext) error {
	if h.OnStart == nil {
		return nil
	}
	return h.OnStart(ctx)
}

// Stop calls OnStop if set.
func (h Hook) Stop(ctx HookContext) error {
	if h.OnStop == nil {
		return nil
	}
	return h.OnStop(ctx)
}

// Lifecycle collects start and stop hooks. Hooks start in the order they
// are appended (which is the order their constructors ran, so a hook's
// dependencies have started before it) and stop in reverse. A hook
// appended by another hook while the hive starts runs after every hook
// appended before it: a way to act once everything else has started.
type Lifecycle interface {
	Append(HookInterface)
}

// HookRecord is one appended hook with its module and timings. StartName
// or StopName is empty when the hook has no such function.
type HookRecord struct {
	Module        FullModuleID
	StartName     string
	StopName      string
	StartDuration time.Duration
	StopDuration  time.Duration
	hook          HookInterface
}

// DefaultLifecycle is the hive's lifecycle.
type DefaultLifecycle struct {
	run     sync.Mutex // serialises Start and Stop
	mu      sync.Mutex // guards hooks; never held while a hook runs
	hooks   []*HookRecord
	started int // number of hooks whose Start succeeded; guarded by run
}

var _ Lifecycle = (*DefaultLifecycle)(nil)

// Append adds a hook owned by the root scope.
func (lc *DefaultLifecycle) Append(h HookInterface) {
	lc.appendFor(nil, h)
}

func (lc *DefaultLifecycle) appendFor(module FullModuleID, h HookInterface) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	startName, stopName := hookNames(h)
	lc.hooks = append(lc.hooks, &HookRecord{Module: module, StartName: startName, StopName: stopName, hook: h})
}

// Hooks returns the hooks in start order.
func (lc *DefaultLifecycle) Hooks() []HookRecord {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	out := make([]HookRecord, len(lc.hooks))
	for i, h := range lc.hooks {
		out[i] = *h
	}
	return out
}

// Start runs the start hooks in order. When one fails, the hooks already
// started are stopped in reverse (with stopCtx) and the error names the
// failing hook's module and function.
func (lc *DefaultLifecycle) Start(ctx context.Context, log *slog.Logger, stopCtx func() (context.Context, context.CancelFunc)) error {
	lc.run.Lock()
	defer lc.run.Unlock()
	for {
		h := lc.hook(lc.started)
		if h == nil {
			return nil
		}
		begin := time.Now()
		err := h.hook.Start(ctx)
		lc.record(&h.StartDuration, time.Since(begin))
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			err = fmt.Errorf("start hook %s%s: %w", h.StartName, inModule(h.Module), err)
			log.Error("Start hook failed", "function", h.StartName, "module", h.Module.String(), "error", err)
			sctx, cancel := stopCtx()
			defer cancel()
			if serr := lc.stopLocked(sctx, log); serr != nil {
				return errors.Join(err, fmt.Errorf("rollback: %w", serr))
			}
			return err
		}
		log.Debug("Start hook executed", "function", h.StartName, "module", h.Module.String(), "duration", time.Since(begin))
		lc.started++
	}
}

func (lc *DefaultLifecycle) record(field *time.Duration, d time.Duration) {
	lc.mu.Lock()
	*field = d
	lc.mu.Unlock()
}

// hook returns the i-th hook, or nil past the end.
func (lc *DefaultLifecycle) hook(i int) *HookRecord {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if i >= len(lc.hooks) {
		return nil
	}
	return lc.hooks[i]
}

// Stop runs the stop hooks of the started hooks in reverse order. Every
// hook is stopped even when some fail; the errors are joined.
func (lc *DefaultLifecycle) Stop(ctx context.Context, log *slog.Logger) error {
	lc.run.Lock()
	defer lc.run.Unlock()
	return lc.stopLocked(ctx, log)
}

func (lc *DefaultLifecycle) stopLocked(ctx context.Context, log *slog.Logger) error {
	var errs []error
	for ; lc.started > 0; lc.started-- {
		h := lc.hook(lc.started - 1)
		begin := time.Now()
		err := h.hook.Stop(ctx)
		lc.record(&h.StopDuration, time.Since(begin))
		if err != nil {
			err = fmt.Errorf("stop hook %s%s: %w", h.StopName, inModule(h.Module), err)
			log.Error("Stop hook failed", "function", h.StopName, "module", h.Module.String(), "error", err)
			errs = append(errs, err)
			continue
		}
		log.Debug("Stop hook executed", "function", h.StopName, "module", h.Module.String(), "duration", time.Since(begin))
	}
	return errors.Join(errs...)
}

// moduleLifecycle tags hooks with the module that appended them.
type moduleLifecycle struct {
	parent Lifecycle
	module FullModuleID
}

func (m moduleLifecycle) Append(h HookInterface) {
	switch p := m.parent.(type) {
	case *DefaultLifecycle:
		p.appendFor(m.module, h)
	case moduleLifecycle:
		// Nested modules decorate the parent's lifecycle: keep the
		// innermost module id.
		moduleLifecycle{parent: p.parent, module: m.module}.Append(h)
	default:
		m.parent.Append(h)
	}
}

// hookNames finds readable names for a hook's start and stop functions.
func hookNames(h HookInterface) (start, stop string) {
	if hk, ok := h.(Hook); ok {
		if hk.OnStart != nil {
			start = FuncName(hk.OnStart)
		}
		if hk.OnStop != nil {
			stop = FuncName(hk.OnStop)
		}
		return start, stop
	}
	t := reflect.TypeOf(h).String()
	return t + ".Start", t + ".Stop"
}

func inModule(m FullModuleID) string {
	if len(m) == 0 {
		return ""
	}
	return fmt.Sprintf(" in module %q", m)
}
