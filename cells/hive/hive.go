package hive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/dig"

	"github.com/apiary-net/apiary/cells/cell"
)

// Options change how a hive is built. The zero value is fine.
type Options struct {
	// EnvPrefix is the prefix of environment variables that set flags
	// (default "APIARY_").
	EnvPrefix string
	// Logger, when set, replaces the logger built from --log-level and
	// --log-format (tests use it).
	Logger *slog.Logger
	// LogOutput is where the built logger writes (default os.Stderr).
	LogOutput io.Writer
	// ModulePrivateProviders are provided privately in every module, so
	// that each module gets its own value: job.ModuleProviders gives
	// each module its job.Group, controller.ModuleProviders its
	// controller.Manager.
	ModulePrivateProviders []any
}

// Hive is a populated (or to be populated) graph of cells.
type Hive struct {
	opts      Options
	container *dig.Container
	scope     *cell.Scope
	cells     []cell.Cell
	flags     *pflag.FlagSet
	applyErr  error
	lifecycle *cell.DefaultLifecycle
	health    *cell.HealthTree
	shutdown  chan error

	populateOnce sync.Once
	populateErr  error
	config       Config
	log          *slog.Logger
	sources      map[string]string
	unknownFiles []string

	timingsMu sync.Mutex
	timings   cell.Timings
}

// New builds a hive from cells with default options.
func New(cells ...cell.Cell) *Hive {
	return NewWithOptions(Options{}, cells...)
}

// NewWithOptions builds a hive from cells. Errors in the cells (duplicate
// providers, bad configs) are reported by Populate.
func NewWithOptions(opts Options, cells ...cell.Cell) *Hive {
	if opts.EnvPrefix == "" {
		opts.EnvPrefix = "APIARY_"
	}
	if opts.LogOutput == nil {
		opts.LogOutput = os.Stderr
	}
	h := &Hive{
		opts:      opts,
		container: dig.New(dig.DeferAcyclicVerification()),
		flags:     pflag.NewFlagSet("hive", pflag.ContinueOnError),
		lifecycle: &cell.DefaultLifecycle{},
		health:    cell.NewHealthTree(nil),
		shutdown:  make(chan error, 1),
		log:       slog.New(slog.DiscardHandler),
	}
	h.scope = cell.NewRootScope(h.container, h.flags, cell.RootOptions{
		ModulePrivateProviders: opts.ModulePrivateProviders,
		Logger:                 func() *slog.Logger { return h.log },
		Health:                 func() cell.Health { return h.health.Root() },
	})
	h.scope.Root().SetFlagSource(func(name string) string { return h.sources[name] })
	h.cells = append([]cell.Cell{cell.Config(DefaultConfig)}, cells...)
	if err := h.provideRoot(); err != nil {
		h.applyErr = err
		return h
	}
	for _, c := range h.cells {
		if err := c.Apply(h.scope); err != nil {
			h.applyErr = err
			return h
		}
	}
	return h
}

// provideRoot provides what every cell may ask for.
func (h *Hive) provideRoot() error {
	ctors := []any{
		func() *slog.Logger { return h.log },
		func() cell.Lifecycle { return h.lifecycle },
		func() cell.Health { return h.health.Root() },
		func() cell.HealthReporter { return h.health },
		func() cell.Shutdowner { return h },
		func() cell.FullModuleID { return nil },
		func() cell.ModuleID { return "" },
		func() cell.ModuleLister { return h },
		func() cell.HookLister { return h },
		func() cell.PhaseTimer { return h },
	}
	for _, c := range ctors {
		if err := h.container.Provide(c); err != nil {
			return fmt.Errorf("provide hive defaults: %w", err)
		}
	}
	return nil
}

// RegisterFlags adds the flags of every Config cell to fs, so that parsing
// fs (e.g. by cobra) sets them.
func (h *Hive) RegisterFlags(fs *pflag.FlagSet) {
	fs.AddFlagSet(h.flags)
}

// Flags returns the hive's flag set (all Config cells' flags).
func (h *Hive) Flags() *pflag.FlagSet { return h.flags }

// Logger returns the hive's logger (valid after Populate).
func (h *Hive) Logger() *slog.Logger { return h.log }

// Populate resolves the configuration and runs the invokes in order. It
// runs once; later calls return the first result.
func (h *Hive) Populate() error {
	h.populateOnce.Do(func() {
		begin := time.Now()
		h.populateErr = h.populate()
		h.setTiming(&h.timings.Populate, time.Since(begin))
	})
	return h.populateErr
}

func (h *Hive) populate() error {
	if h.applyErr != nil {
		return h.applyErr
	}
	sources, unknown, err := applySources(h.flags, h.opts.EnvPrefix)
	if err != nil {
		return err
	}
	h.sources, h.unknownFiles = sources, unknown
	if err := h.container.Invoke(func(c Config) { h.config = c }); err != nil {
		return unwrapDig(err)
	}
	if err := h.buildLogger(); err != nil {
		return err
	}
	if len(unknown) > 0 {
		h.log.Warn("Ignoring files in --config-dir that match no flag",
			"config-dir", h.config.ConfigDir, "files", unknown)
	}
	if err := h.scope.Root().CheckConfigs(); err != nil {
		return unwrapDig(err)
	}
	for _, inv := range h.scope.Root().Invokes() {
		if err := inv.Run(); err != nil {
			return unwrapDig(err)
		}
		h.log.Debug("Invoked", "function", inv.Name, "module", inv.Module.String(), "duration", inv.Duration)
	}
	return nil
}

func (h *Hive) buildLogger() error {
	if h.opts.Logger != nil {
		h.log = h.opts.Logger
		return nil
	}
	level, _ := parseLevel(h.config.LogLevel) // validated by Config.Validate
	ho := &slog.HandlerOptions{Level: level}
	if h.config.LogFormat == "json" {
		h.log = slog.New(slog.NewJSONHandler(h.opts.LogOutput, ho))
	} else {
		h.log = slog.New(slog.NewTextHandler(h.opts.LogOutput, ho))
	}
	return nil
}

// Start populates the hive if needed and runs the start hooks within the
// start timeout. On failure the started hooks are stopped again.
func (h *Hive) Start(ctx context.Context) error {
	if err := h.Populate(); err != nil {
		return err
	}
	begin := time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, h.config.HiveStartTimeout,
		fmt.Errorf("start timeout (--hive-start-timeout=%s) exceeded", h.config.HiveStartTimeout))
	defer cancel()
	err := h.lifecycle.Start(ctx, h.log, h.stopContext)
	if err != nil && context.Cause(ctx) != nil && !errors.Is(err, context.Cause(ctx)) {
		err = fmt.Errorf("%w: %w", err, context.Cause(ctx))
	}
	took := time.Since(begin)
	h.setTiming(&h.timings.Start, took)
	if err != nil {
		return err
	}
	h.log.Info("Started", "duration", took, "hooks", len(h.lifecycle.Hooks()))
	return nil
}

func (h *Hive) stopContext() (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(context.Background(), h.config.HiveStopTimeout,
		fmt.Errorf("stop timeout (--hive-stop-timeout=%s) exceeded", h.config.HiveStopTimeout))
}

// Stop runs the stop hooks of the started hooks in reverse order, within
// the stop timeout (ctx may shorten it).
func (h *Hive) Stop(ctx context.Context) error {
	begin := time.Now()
	sctx, cancel := h.stopContext()
	defer cancel()
	stopCtx, stopCancel := context.WithCancelCause(sctx)
	defer stopCancel(nil)
	stopAfter := context.AfterFunc(ctx, func() { stopCancel(context.Cause(ctx)) })
	defer stopAfter()
	err := h.lifecycle.Stop(stopCtx, h.log)
	if err != nil && context.Cause(stopCtx) != nil {
		err = fmt.Errorf("%w: %w", err, context.Cause(stopCtx))
	}
	took := time.Since(begin)
	h.setTiming(&h.timings.Stop, took)
	if err == nil {
		h.log.Info("Stopped", "duration", took)
	}
	return err
}

// Shutdown asks a running hive to stop. It implements cell.Shutdowner.
func (h *Hive) Shutdown(opts ...cell.ShutdownOption) {
	var req cell.ShutdownRequest
	for _, o := range opts {
		o(&req)
	}
	select {
	case h.shutdown <- req.Err:
	default: // a shutdown is already pending
	}
}

// Run starts the hive, waits until ctx is done or a cell asks for a
// shutdown, and stops it. It returns the start error, or the shutdown
// error joined with any stop error.
func (h *Hive) Run(ctx context.Context) error {
	if err := h.Start(ctx); err != nil {
		return err
	}
	var shutdownErr error
	select {
	case <-ctx.Done():
		h.log.Info("Stopping", "reason", context.Cause(ctx))
	case shutdownErr = <-h.shutdown:
		if shutdownErr != nil {
			h.log.Error("Fatal shutdown requested", "error", shutdownErr)
		} else {
			h.log.Info("Shutdown requested")
		}
	}
	return errors.Join(shutdownErr, h.Stop(context.Background()))
}

// unwrapDig shortens dig's error chains to the root cause when the cause
// is one of ours: a configuration error alone (it names its flag; which
// invoke needed the config is noise), a constructor error with the
// first step of the chain.
func unwrapDig(err error) error {
	if cfgErr, ok := errors.AsType[*cell.ConfigError](err); ok {
		return cfgErr
	}
	if root := dig.RootCause(err); root != nil && root != err {
		return fmt.Errorf("%w (%s)", root, firstLine(err.Error()))
	}
	return err
}

func firstLine(s string) string {
	for i, r := range s {
		if r == ':' {
			return s[:i]
		}
	}
	return s
}
