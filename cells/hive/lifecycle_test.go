package hive_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
)

// recorder collects lifecycle events in order.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// hookCell returns a module providing *T, whose constructor depends on
// deps and appends a hook that records start/stop of name.
type (
	dbT  struct{}
	apiT struct{}
	appT struct{}
)

func lifecycleCells(rec *recorder, failStart string) []cell.Cell {
	hook := func(name string, lc cell.Lifecycle) {
		rec.add("construct " + name)
		lc.Append(cell.Hook{
			OnStart: func(cell.HookContext) error {
				if name == failStart {
					return errors.New("boom")
				}
				rec.add("start " + name)
				return nil
			},
			OnStop: func(cell.HookContext) error { rec.add("stop " + name); return nil },
		})
	}
	return []cell.Cell{
		// Declared in reverse dependency order on purpose: hooks follow
		// construction order, not declaration order.
		cell.Module("app", "App", cell.Provide(func(lc cell.Lifecycle, _ *apiT) *appT { hook("app", lc); return &appT{} })),
		cell.Module("api", "API", cell.Provide(func(lc cell.Lifecycle, _ *dbT) *apiT { hook("api", lc); return &apiT{} })),
		cell.Module("db", "DB", cell.Provide(func(lc cell.Lifecycle) *dbT { hook("db", lc); return &dbT{} })),
		cell.Invoke(func(*appT) {}),
	}
}

func TestStartStopOrder(t *testing.T) {
	rec := &recorder{}
	h := celltest.New(t, nil, lifecycleCells(rec, "")...)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"construct db", "construct api", "construct app",
		"start db", "start api", "start app",
		"stop app", "stop api", "stop db",
	}
	if got := rec.list(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}

func TestStartFailureRollsBack(t *testing.T) {
	rec := &recorder{}
	h := celltest.New(t, nil, lifecycleCells(rec, "app")...)
	err := h.Start(context.Background())
	if err == nil {
		t.Fatal("Start succeeded, want the app hook's error")
	}
	for _, want := range []string{`in module "app"`, "lifecycleCells", "boom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	want := []string{
		"construct db", "construct api", "construct app",
		"start db", "start api",
		"stop api", "stop db",
	}
	if got := rec.list(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	// Nothing is left to stop.
	if err := h.Stop(context.Background()); err != nil {
		t.Errorf("Stop after rollback: %v", err)
	}
	if got := rec.list(); len(got) != len(want) {
		t.Errorf("Stop after rollback ran hooks again: %q", got[len(want):])
	}
}

func TestStopRunsEveryHookAndJoinsErrors(t *testing.T) {
	var stopped []string
	h := celltest.New(t, nil, cell.Invoke(func(lc cell.Lifecycle) {
		for _, name := range []string{"a", "b", "c"} {
			lc.Append(cell.Hook{OnStop: func(cell.HookContext) error {
				stopped = append(stopped, name)
				if name != "a" {
					return errors.New(name + " failed")
				}
				return nil
			}})
		}
	}))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := h.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "b failed") || !strings.Contains(err.Error(), "c failed") {
		t.Errorf("Stop error = %v, want both b and c failures", err)
	}
	if !slices.Equal(stopped, []string{"c", "b", "a"}) {
		t.Errorf("stopped %q, want c b a", stopped)
	}
}

func blockingHook(lc cell.Lifecycle, onStart bool) {
	block := func(ctx cell.HookContext) error {
		<-ctx.Done()
		return ctx.Err()
	}
	if onStart {
		lc.Append(cell.Hook{OnStart: block})
	} else {
		lc.Append(cell.Hook{OnStop: block})
	}
}

func TestStartTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := celltest.New(t, []string{"hive-start-timeout=30s"},
			cell.Invoke(func(lc cell.Lifecycle) { blockingHook(lc, true) }))
		begin := time.Now()
		err := h.Start(context.Background())
		if err == nil || !strings.Contains(err.Error(), "start timeout (--hive-start-timeout=30s) exceeded") {
			t.Fatalf("Start error = %v, want the start timeout", err)
		}
		if took := time.Since(begin); took != 30*time.Second {
			t.Errorf("Start gave up after %s, want 30s", took)
		}
	})
}

func TestStopTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := celltest.New(t, nil, cell.Invoke(func(lc cell.Lifecycle) { blockingHook(lc, false) }))
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		err := h.Stop(context.Background())
		if err == nil || !strings.Contains(err.Error(), "stop timeout (--hive-stop-timeout=1m0s) exceeded") {
			t.Fatalf("Stop error = %v, want the default stop timeout", err)
		}
		if took := time.Since(begin); took != time.Minute {
			t.Errorf("Stop gave up after %s, want the default 1m", took)
		}
	})
}

func TestHookDurationsRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := celltest.New(t, nil, cell.Module("slow", "Slow", cell.Invoke(func(lc cell.Lifecycle) {
			lc.Append(cell.Hook{
				OnStart: func(cell.HookContext) error { time.Sleep(3 * time.Second); return nil },
				OnStop:  func(cell.HookContext) error { time.Sleep(time.Second); return nil },
			})
		})))
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := h.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		hooks := h.Hooks()
		if len(hooks) != 1 {
			t.Fatalf("%d hooks, want 1", len(hooks))
		}
		if hk := hooks[0]; hk.StartDuration != 3*time.Second || hk.StopDuration != time.Second || hk.Module.String() != "slow" {
			t.Errorf("hook record = %+v, want 3s start, 1s stop, module slow", hk)
		}
	})
}

func TestRunReturnsShutdownError(t *testing.T) {
	for _, tc := range []struct {
		name string
		give []cell.ShutdownOption
		want string
	}{
		{name: "clean", give: nil, want: ""},
		{name: "fatal", give: []cell.ShutdownOption{cell.ShutdownWithError(errors.New("lost the kvstore"))}, want: "lost the kvstore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stopped := false
			h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, cell.Invoke(func(lc cell.Lifecycle, s cell.Shutdowner) {
				lc.Append(cell.Hook{
					OnStart: func(cell.HookContext) error { s.Shutdown(tc.give...); return nil },
					OnStop:  func(cell.HookContext) error { stopped = true; return nil },
				})
			}))
			err := h.Run(context.Background())
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Run() = %v, want %q", err, tc.want)
			}
			if !stopped {
				t.Error("Run returned without stopping the hooks")
			}
		})
	}
}

func TestRunStopsWhenContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var stopped bool
		h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, cell.Invoke(func(lc cell.Lifecycle) {
			lc.Append(cell.Hook{OnStop: func(cell.HookContext) error { stopped = true; return nil }})
		}))
		errc := make(chan error)
		go func() { errc <- h.Run(ctx) }()
		synctest.Wait() // Run has started and waits for ctx
		if stopped {
			t.Fatal("stopped before the context was done")
		}
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("Run() = %v", err)
		}
		if !stopped {
			t.Error("hooks not stopped")
		}
	})
}

func TestInvokesRunInDeclarationOrder(t *testing.T) {
	var order []string
	celltest.New(t, nil,
		cell.Invoke(func() { order = append(order, "first") }),
		cell.Module("m", "M", cell.Invoke(func() { order = append(order, "second") })),
		cell.Invoke(func() { order = append(order, "third") }),
	)
	if !slices.Equal(order, []string{"first", "second", "third"}) {
		t.Errorf("order = %q", order)
	}
}

func TestPopulateErrorsNameTheCulprit(t *testing.T) {
	type missing struct{}
	for _, tc := range []struct {
		name string
		give []cell.Cell
		want string
	}{
		{
			name: "missing dependency",
			give: []cell.Cell{cell.Module("needy", "Needy", cell.Invoke(func(*missing) {}))},
			want: "missing type: *hive_test.missing",
		},
		{
			name: "constructor error",
			give: []cell.Cell{
				cell.Provide(func() (*dbT, error) { return nil, errors.New("cannot open db") }),
				cell.Invoke(func(*dbT) {}),
			},
			want: "cannot open db",
		},
		{
			name: "duplicate provider",
			give: []cell.Cell{
				cell.Module("a", "A", cell.Provide(func() *dbT { return nil })),
				cell.Module("b", "B", cell.Provide(func() *dbT { return nil })),
			},
			want: "already provided",
		},
		{
			name: "invoke not a function",
			give: []cell.Cell{cell.Module("bad", "Bad", cell.Invoke(42))},
			want: `invoke in module "bad": int is not a function`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, tc.give...)
			err := h.Populate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Populate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestHookAppendedDuringStartRunsLast(t *testing.T) {
	rec := &recorder{}
	h := celltest.New(t, nil,
		cell.Module("first", "First", cell.Invoke(func(lc cell.Lifecycle) {
			lc.Append(cell.Hook{OnStart: func(cell.HookContext) error {
				rec.add("start first")
				lc.Append(cell.Hook{
					OnStart: func(cell.HookContext) error { rec.add("everything started"); return nil },
					OnStop:  func(cell.HookContext) error { rec.add("stop late"); return nil },
				})
				return nil
			}, OnStop: func(cell.HookContext) error { rec.add("stop first"); return nil }})
		})),
		cell.Module("second", "Second", cell.Invoke(func(lc cell.Lifecycle) {
			lc.Append(cell.Hook{
				OnStart: func(cell.HookContext) error { rec.add("start second"); return nil },
				OnStop:  func(cell.HookContext) error { rec.add("stop second"); return nil },
			})
		})),
	)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"start first", "start second", "everything started", "stop late", "stop second", "stop first"}
	if got := rec.list(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}
