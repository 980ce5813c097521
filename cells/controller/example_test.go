package controller_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
)

// A controller runs at once and every RunInterval; updating it replaces
// its function and runs it again at once; removing it runs its StopFunc.
// In a cell, ask for a controller.Manager instead of creating one: the
// hive gives every module one.
func ExampleManager() {
	lc := &cell.DefaultLifecycle{}
	m := controller.NewRegistry().NewManager(controller.ManagerParams{
		Health:    cell.NewHealthTree(nil).Root(),
		Lifecycle: lc,
		Module:    cell.FullModuleID{"example"},
	})
	discard := slog.New(slog.DiscardHandler)
	stopCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), time.Minute)
	}
	ran := make(chan struct{})
	syncRoutes := func(n int) controller.Params {
		return controller.Params{
			DoFunc: func(ctx context.Context) error {
				fmt.Println("syncing", n, "routes")
				select {
				case ran <- struct{}{}:
				case <-ctx.Done():
				}
				return nil
			},
			StopFunc: func(ctx context.Context) error {
				fmt.Println("removing routes")
				return nil
			},
			RunInterval: time.Hour,
		}
	}
	m.Update("sync-routes", syncRoutes(2))

	if err := lc.Start(context.Background(), discard, stopCtx); err != nil {
		panic(err)
	}
	<-ran
	m.Update("sync-routes", syncRoutes(3))
	<-ran
	if err := m.Remove("sync-routes"); err != nil {
		panic(err)
	}
	err := m.Remove("sync-routes")
	fmt.Println(errors.Is(err, controller.ErrNoController))
	if err := lc.Stop(context.Background(), discard); err != nil {
		panic(err)
	}
	// Output:
	// syncing 2 routes
	// syncing 3 routes
	// removing routes
	// true
}
