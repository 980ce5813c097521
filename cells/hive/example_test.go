package hive_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
)

// Run starts the hive and stops it when the context is done or a cell
// asks for a shutdown; a fatal shutdown's error is Run's result.
func ExampleHive_Run() {
	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		cell.Module("watchdog", "Gives up at once",
			cell.Invoke(func(lc cell.Lifecycle, s cell.Shutdowner) {
				lc.Append(cell.Hook{OnStart: func(cell.HookContext) error {
					s.Shutdown(cell.ShutdownWithError(errors.New("lost quorum")))
					return nil
				}})
			}),
		),
	)
	err := h.Run(context.Background())
	fmt.Println("Run:", err)
	// Output:
	// Run: lost quorum
}

// Start reports which hook failed, after stopping the ones that started.
func ExampleHive_Start() {
	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		cell.Module("db", "Database", cell.Invoke(func(lc cell.Lifecycle) {
			lc.Append(cell.Hook{
				OnStart: func(cell.HookContext) error { fmt.Println("db started"); return nil },
				OnStop:  func(cell.HookContext) error { fmt.Println("db stopped"); return nil },
			})
		})),
		cell.Module("api", "API", cell.Invoke(func(lc cell.Lifecycle) {
			lc.Append(cell.Hook{OnStart: func(cell.HookContext) error { return errors.New("address in use") }})
		})),
	)
	err := h.Start(context.Background())
	fmt.Println(err)
	// Output:
	// db started
	// db stopped
	// start hook hive_test.ExampleHive_Start.func2.1 in module "api": address in use
}
