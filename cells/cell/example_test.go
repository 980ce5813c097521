package cell_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
)

// GreeterConfig is the configuration of the greeter cell. Field Greeting
// is set by flag --greeting.
type GreeterConfig struct {
	Greeting string
}

// Flags registers the flags, with the receiver's values as defaults.
func (def GreeterConfig) Flags(fs *pflag.FlagSet) {
	fs.String("greeting", def.Greeting, "What to say")
}

// Greeter is the service the cell provides.
type Greeter interface{ Greet(name string) string }

type greeter struct{ cfg GreeterConfig }

func (g *greeter) Greet(name string) string { return g.cfg.Greeting + ", " + name }

// newGreeter validates and allocates; I/O waits for the start hook.
func newGreeter(cfg GreeterConfig, lc cell.Lifecycle) Greeter {
	g := &greeter{cfg: cfg}
	lc.Append(cell.Hook{
		OnStart: func(cell.HookContext) error { fmt.Println("greeter started"); return nil },
		OnStop:  func(cell.HookContext) error { fmt.Println("greeter stopped"); return nil },
	})
	return g
}

// GreeterCell is what a package would export as `var Cell`.
var GreeterCell = cell.Module("greeter", "Greets people",
	cell.Config(GreeterConfig{Greeting: "Hello"}),
	cell.Provide(newGreeter),
)

// A module with a config, a provider and a lifecycle hook, pulled in by an
// invoke.
func ExampleModule() {
	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		GreeterCell,
		cell.Invoke(func(g Greeter) { fmt.Println(g.Greet("world")) }),
	)
	fs := pflag.NewFlagSet("example", pflag.ContinueOnError)
	h.RegisterFlags(fs)
	_ = fs.Parse([]string{"--greeting=Hi"})

	if err := h.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	_ = h.Stop(context.Background())
	// Output:
	// Hi, world
	// greeter started
	// greeter stopped
}

// ProvidePrivate keeps an object inside its module: siblings cannot ask
// for it.
func ExampleProvidePrivate() {
	type token string
	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		cell.Module("vault", "Holds the token",
			cell.ProvidePrivate(func() token { return "s3cret" }),
			cell.Invoke(func(t token) { fmt.Println("vault sees", t) }),
		),
		cell.Module("thief", "Wants the token",
			cell.Invoke(func(t token) { fmt.Println("thief sees", t) }),
		),
	)
	err := h.Populate()
	fmt.Println(err != nil)
	// Output:
	// vault sees s3cret
	// true
}

// Decorate replaces an object for the cells it wraps only.
func ExampleDecorate() {
	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		cell.Provide(func() string { return "plain" }),
		cell.Decorate(func(s string) string { return "decorated " + s },
			cell.Invoke(func(s string) { fmt.Println("inside:", s) }),
		),
		cell.Invoke(func(s string) { fmt.Println("outside:", s) }),
	)
	_ = h.Populate()
	// Output:
	// inside: decorated plain
	// outside: plain
}

// Health is scoped to the module that asks for it.
func ExampleHealth() {
	var reporter cell.HealthReporter
	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		cell.Module("kvstore", "Key-value store", cell.Invoke(func(h cell.Health) {
			h.NewScope("session").Degraded("lease expired", nil)
		})),
		cell.Invoke(func(r cell.HealthReporter) { reporter = r }),
	)
	_ = h.Populate()
	for _, st := range reporter.All() {
		fmt.Println(st.ID, st.Level, st.Message)
	}
	// Output:
	// kvstore.session Degraded lease expired
}
