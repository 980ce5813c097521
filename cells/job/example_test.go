package job_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
)

// exampleGroup returns a group outside a hive and its lifecycle. In a cell,
// ask for a job.Group instead: the hive gives every module one.
func exampleGroup() (job.Group, *cell.DefaultLifecycle) {
	lc := &cell.DefaultLifecycle{}
	g := job.NewGroup(job.GroupParams{
		Health:    cell.NewHealthTree(nil).Root(),
		Lifecycle: lc,
		Module:    cell.FullModuleID{"example"},
	})
	return g, lc
}

var discard = slog.New(slog.DiscardHandler)

func exampleStopContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

// A one-shot job retries with backoff until it succeeds (or its retries
// are used up).
func ExampleOneShot() {
	g, lc := exampleGroup()
	done := make(chan struct{})
	attempts := 0
	g.Add(job.OneShot("restore-endpoints", func(ctx context.Context, health cell.Health) error {
		attempts++
		if attempts < 3 {
			fmt.Println("attempt", attempts, "failed: state dir locked")
			return errors.New("state dir locked")
		}
		fmt.Println("attempt", attempts, "restored 2 endpoints")
		close(done)
		return nil
	}, job.WithRetry(5, job.Backoff{Min: time.Millisecond, Max: 10 * time.Millisecond})))

	if err := lc.Start(context.Background(), discard, exampleStopContext); err != nil {
		panic(err)
	}
	<-done
	if err := lc.Stop(context.Background(), discard); err != nil {
		panic(err)
	}
	// Output:
	// attempt 1 failed: state dir locked
	// attempt 2 failed: state dir locked
	// attempt 3 restored 2 endpoints
}

// A trigger folds a burst of events into one run with the distinct
// reasons, in the order they first arrived.
func ExampleNewTrigger() {
	g, lc := exampleGroup()
	done := make(chan struct{})
	regenerate := job.NewTrigger("regenerate-policy", func(ctx context.Context, reasons []string) error {
		fmt.Println("regenerating for", reasons)
		close(done)
		return nil
	}, job.TriggerParams{After: 10 * time.Millisecond, Max: time.Second})
	g.Add(regenerate)

	regenerate.Trigger("policy-added")
	regenerate.Trigger("identity-allocated")
	regenerate.Trigger("policy-added")

	if err := lc.Start(context.Background(), discard, exampleStopContext); err != nil {
		panic(err)
	}
	<-done
	if err := lc.Stop(context.Background(), discard); err != nil {
		panic(err)
	}
	// Output:
	// regenerating for [policy-added identity-allocated]
}

// A timer job runs at start and every interval; a kicker runs it early.
func ExampleTimer() {
	g, lc := exampleGroup()
	ran := make(chan struct{})
	kicker := job.NewKicker()
	runs := 0
	g.Add(job.Timer("gc-conntrack", func(ctx context.Context) error {
		runs++
		fmt.Println("conntrack gc run", runs)
		select {
		case ran <- struct{}{}:
		case <-ctx.Done():
		}
		return nil
	}, time.Hour, job.WithKicker(kicker)))

	if err := lc.Start(context.Background(), discard, exampleStopContext); err != nil {
		panic(err)
	}
	<-ran // at start
	kicker.Kick()
	<-ran // kicked, long before the hour is up
	if err := lc.Stop(context.Background(), discard); err != nil {
		panic(err)
	}
	// Output:
	// conntrack gc run 1
	// conntrack gc run 2
}
