package bench

import (
	"context"
	"fmt"
	"log/slog"

	ciliumhive "github.com/cilium/hive"
	"go.uber.org/fx"

	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/hack/bench/graph"
)

// Framework is one way to run the graph.
type Framework struct {
	// Name is how tables and benchmarks call it.
	Name string
	// Run builds, populates, starts and stops the graph once.
	Run func(ctx context.Context) error
}

// Frameworks are the frameworks compared, ours first.
var Frameworks = []Framework{
	{Name: "apiary", Run: RunHive},
	{Name: "fx", Run: RunFx},
	{Name: "cilium-hive", Run: RunCiliumHive},
}

var discardLogger = slog.New(slog.DiscardHandler)

// RunHive builds, populates, starts and stops graph.HiveCells with
// apiary's hive and a discarding logger.
func RunHive(ctx context.Context) error {
	h := hive.NewWithOptions(hive.Options{Logger: discardLogger}, graph.HiveCells...)
	if err := h.Populate(); err != nil {
		return fmt.Errorf("populate hive: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return fmt.Errorf("start hive: %w", err)
	}
	if err := h.Stop(ctx); err != nil {
		return fmt.Errorf("stop hive: %w", err)
	}
	return nil
}

// RunFx builds, starts and stops graph.FxOptions with fx and its no-op
// event logger.
func RunFx(ctx context.Context) error {
	app := fx.New(fx.NopLogger, graph.FxOptions)
	if err := app.Err(); err != nil {
		return fmt.Errorf("populate fx: %w", err)
	}
	if err := app.Start(ctx); err != nil {
		return fmt.Errorf("start fx: %w", err)
	}
	if err := app.Stop(ctx); err != nil {
		return fmt.Errorf("stop fx: %w", err)
	}
	return nil
}

// RunCiliumHive builds, populates, starts and stops graph.CiliumCells with
// github.com/cilium/hive (default options) and a discarding logger.
func RunCiliumHive(ctx context.Context) error {
	h := ciliumhive.New(graph.CiliumCells...)
	if err := h.Populate(discardLogger); err != nil {
		return fmt.Errorf("populate cilium hive: %w", err)
	}
	if err := h.Start(discardLogger, ctx); err != nil {
		return fmt.Errorf("start cilium hive: %w", err)
	}
	if err := h.Stop(discardLogger, ctx); err != nil {
		return fmt.Errorf("stop cilium hive: %w", err)
	}
	return nil
}
