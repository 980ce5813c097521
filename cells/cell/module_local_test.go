package cell_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
)

// A module that only provides exported constructors gets no dig scope of
// its own (module_local.go). These tests run each module twice, as it is
// and with a private provider nobody uses added, which gives it a scope,
// and require the same observations from both.

type (
	localA      struct{ seen string }
	localB      struct{ seen string }
	localSecret struct{}
	scopeForcer struct{}
)

// withScope returns cells with a private provider added, which makes
// their module take a dig scope.
func withScope(cells ...cell.Cell) []cell.Cell {
	return append(cells, cell.ProvidePrivate(func() *scopeForcer { return &scopeForcer{} }))
}

// observe populates, starts and stops a hive whose root invokes the given
// types, and describes what happened: what the constructors saw, the log
// lines, the health ids and the start error (hooks fail on purpose, so
// that their module is named).
func observe(t *testing.T, seen *[]string, cells ...cell.Cell) string {
	t.Helper()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}))
	var health []string
	cells = append(cells, cell.Invoke(func(r cell.HealthReporter) {
		for _, st := range r.All() {
			health = append(health, st.ID)
		}
	}))
	h := hive.NewWithOptions(hive.Options{Logger: log}, cells...)
	var out []string
	if err := h.Populate(); err != nil {
		out = append(out, "populate: "+err.Error())
	} else {
		err := h.Start(context.Background())
		out = append(out, fmt.Sprintf("start: %v", err))
		if err == nil {
			out = append(out, fmt.Sprintf("stop: %v", h.Stop(context.Background())))
		}
	}
	out = append(out, *seen...)
	out = append(out, "health: "+strings.Join(health, " "))
	return strings.Join(out, "\n") + "\n" + logs.String()
}

// failHook appends a hook whose start fails with the hook's owner.
func failHook(lc cell.Lifecycle, owner string) {
	lc.Append(cell.Hook{OnStart: func(cell.HookContext) error { return errors.New("fail " + owner) }})
}

type localIn struct {
	cell.In

	Log       *slog.Logger
	Health    cell.Health
	Lifecycle cell.Lifecycle
	Nested    localNestedIn
}

type localNestedIn struct {
	cell.In

	ID  cell.FullModuleID
	Mod cell.ModuleID `optional:"true"`
}

func TestModuleWithoutScopeSeesItsOwnObjects(t *testing.T) {
	tests := []struct {
		name  string
		cells func(seen *[]string, scoped bool) []cell.Cell
		want  []string // lines the observation must contain
	}{
		{
			name: "direct parameters",
			cells: func(seen *[]string, scoped bool) []cell.Cell {
				ctor := func(lc cell.Lifecycle, log *slog.Logger, h cell.Health, id cell.FullModuleID, mid cell.ModuleID) *localA {
					*seen = append(*seen, fmt.Sprintf("ids %s %s", id, mid))
					log.Info("Built")
					h.OK("fine")
					failHook(lc, "a")
					return &localA{}
				}
				mod := []cell.Cell{cell.Provide(ctor)}
				if scoped {
					mod = withScope(mod...)
				}
				return []cell.Cell{cell.Module("outer", "Outer", cell.Module("alpha", "Alpha", mod...)), cell.Invoke(func(*localA) {})}
			},
			want: []string{
				`in module "outer.alpha": fail a`,
				"ids outer.alpha alpha",
				"health: outer.alpha",
				"level=INFO msg=Built module=outer.alpha",
			},
		},
		{
			name: "cell.In fields, nested",
			cells: func(seen *[]string, scoped bool) []cell.Cell {
				ctor := func(in localIn) *localA {
					*seen = append(*seen, fmt.Sprintf("ids %s %s", in.Nested.ID, in.Nested.Mod))
					in.Log.Info("Built")
					in.Health.OK("fine")
					failHook(in.Lifecycle, "a")
					return &localA{}
				}
				mod := []cell.Cell{cell.Provide(ctor)}
				if scoped {
					mod = withScope(mod...)
				}
				return []cell.Cell{cell.Module("beta", "Beta", mod...), cell.Invoke(func(*localA) {})}
			},
			want: []string{
				`in module "beta": fail a`,
				"ids beta beta",
				"health: beta",
				"level=INFO msg=Built module=beta",
			},
		},
		{
			name: "one logger per module, shared by its constructors",
			cells: func(seen *[]string, scoped bool) []cell.Cell {
				var first *slog.Logger
				mod := []cell.Cell{
					cell.Provide(func(log *slog.Logger) *localA { first = log; return &localA{} }),
					cell.Provide(func(log *slog.Logger, _ *localA) *localB {
						*seen = append(*seen, fmt.Sprintf("same logger: %v", log == first))
						return &localB{}
					}),
				}
				if scoped {
					mod = withScope(mod...)
				}
				return []cell.Cell{cell.Module("gamma", "Gamma", mod...), cell.Invoke(func(*localB) {})}
			},
			want: []string{"same logger: true"},
		},
		{
			name: "parent's private objects",
			cells: func(seen *[]string, scoped bool) []cell.Cell {
				child := []cell.Cell{cell.Provide(func(lc cell.Lifecycle, s *localSecret) *localA {
					*seen = append(*seen, fmt.Sprintf("secret: %v", s != nil))
					failHook(lc, "child")
					return &localA{}
				})}
				if scoped {
					child = withScope(child...)
				}
				return []cell.Cell{
					cell.Module("parent", "Parent",
						cell.ProvidePrivate(func() *localSecret { return &localSecret{} }),
						cell.Module("child", "Child", child...),
					),
					cell.Invoke(func(*localA) {}),
				}
			},
			want: []string{
				`in module "parent.child": fail child`,
				"secret: true",
			},
		},
		{
			name: "constructor error",
			cells: func(_ *[]string, scoped bool) []cell.Cell {
				mod := []cell.Cell{cell.Provide(newFailingLocal)}
				if scoped {
					mod = withScope(mod...)
				}
				return []cell.Cell{cell.Module("delta", "Delta", mod...), cell.Invoke(func(*localA) {})}
			},
			want: []string{"populate: no localA for module delta (invoke cell_test.TestModuleWithoutScopeSeesItsOwnObjects."},
		},
		{
			name: "missing dependency",
			cells: func(_ *[]string, scoped bool) []cell.Cell {
				mod := []cell.Cell{cell.Provide(newLocalNeedingSecret)}
				if scoped {
					mod = withScope(mod...)
				}
				return []cell.Cell{cell.Module("eps", "Eps", mod...), cell.Invoke(func(*localA) {})}
			},
			want: []string{`populate: missing type: *cell_test.localSecret`},
		},
		{
			name: "provided twice",
			cells: func(_ *[]string, scoped bool) []cell.Cell {
				mod := []cell.Cell{cell.Provide(newFailingLocal, newLocalNeedingSecret)}
				if scoped {
					mod = withScope(mod...)
				}
				return []cell.Cell{cell.Module("zeta", "Zeta", mod...)}
			},
			want: []string{`populate: provide cell_test.newLocalNeedingSecret in module "zeta": cannot provide function "github.com/apiary-net/apiary/cells/cell_test".newLocalNeedingSecret`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seenFree, seenScoped []string
			free := observe(t, &seenFree, tt.cells(&seenFree, false)...)
			scoped := observe(t, &seenScoped, tt.cells(&seenScoped, true)...)
			if free != scoped {
				t.Errorf("without a scope:\n%s\nwith a scope:\n%s", free, scoped)
			}
			for _, w := range tt.want {
				if !strings.Contains(free, w) {
					t.Errorf("observation lacks %q:\n%s", w, free)
				}
			}
			if strings.Contains(free, "makeFunc") {
				t.Errorf("a message names the wrapper instead of the constructor:\n%s", free)
			}
		})
	}
}

func newFailingLocal(mid cell.ModuleID) (*localA, error) {
	return nil, fmt.Errorf("no localA for module %s", mid)
}

func newLocalNeedingSecret(_ cell.Lifecycle, _ *localSecret) *localA { return &localA{} }

// TestModuleWithoutScopeHookOrder checks that hooks of modules without a
// scope keep construction order and carry their module.
func TestModuleWithoutScopeHookOrder(t *testing.T) {
	var order []string
	hook := func(lc cell.Lifecycle, id cell.FullModuleID) {
		lc.Append(cell.Hook{
			OnStart: func(cell.HookContext) error { order = append(order, "start "+id.String()); return nil },
			OnStop:  func(cell.HookContext) error { order = append(order, "stop "+id.String()); return nil },
		})
	}
	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		cell.Module("b", "B", cell.Provide(func(lc cell.Lifecycle, id cell.FullModuleID, _ *localA) *localB {
			hook(lc, id)
			return &localB{}
		})),
		cell.Module("a", "A", cell.Provide(func(lc cell.Lifecycle, id cell.FullModuleID) *localA {
			hook(lc, id)
			return &localA{}
		})),
		cell.Invoke(func(*localB) {}),
	)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"start a", "start b", "stop b", "stop a"}; !slices.Equal(order, want) {
		t.Errorf("hooks ran %v, want %v", order, want)
	}
}
