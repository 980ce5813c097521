package stdhive_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/stdhive"
)

// A module asks for its own job.Group, which stdhive.New provides.
func ExampleNew() {
	done := make(chan struct{})
	greeter := cell.Module("greeter", "Says hello once started",
		cell.Invoke(func(g job.Group) {
			g.Add(job.OneShot("hello", func(context.Context, cell.Health) error {
				fmt.Println("hello from the greeter's job")
				close(done)
				return nil
			}))
		}))
	h := stdhive.New(hive.Options{Logger: slog.New(slog.DiscardHandler)}, greeter)
	if err := h.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	<-done
	if err := h.Stop(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: hello from the greeter's job
}
