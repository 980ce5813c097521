package status_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cells/stdhive"
)

// kvstore is a cell that adds a "KVStore" line to `apiary status`.
var kvstore = cell.Module("kvstore", "Key-value store client",
	cell.Provide(func(m cell.FullModuleID) status.ProviderOut {
		return status.NewProviderOut(m, "KVStore", func(context.Context) status.Report {
			return status.Report{State: status.Disabled, Message: "--kvstore is empty"}
		})
	}),
)

func ExampleNewProviderOut() {
	var c status.Collector
	h := stdhive.New(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		kvstore, status.Cell, cell.Invoke(func(col status.Collector) { c = col }))
	if err := h.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	defer h.Stop(context.Background())

	st := c.Status()
	for _, e := range st.Entries {
		fmt.Printf("%s: %s %s\n", e.Name, e.State, e.Message)
	}
	fmt.Println("Overall:", st.State)
	// Output:
	// KVStore: Disabled --kvstore is empty
	// Controllers: Ok 0/0 healthy
	// Hive: Ok 2 modules, 0 degraded
	// Overall: Ok
}
