package cell

import (
	"log/slog"
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

type (
	skipA struct{}
	skipB struct{}
)

type skipIn struct {
	In

	Log *slog.Logger
	A   *skipA
}

type skipNamedIn struct {
	In

	Log *slog.Logger `name:"audit"`
}

type skipGroupIn struct {
	In

	Lifecycles []Lifecycle `group:"lcs"`
	Lifecycle  Lifecycle   `group:"lc"`
}

type skipPrivateGroup struct{}

// TestModuleCanSkipScope checks which modules are applied without a dig
// scope of their own: those that only provide exported constructors that
// can be wrapped, with configs and child modules.
func TestModuleCanSkipScope(t *testing.T) {
	tests := []struct {
		name string
		give *module
		opts RootOptions
		want bool
	}{
		{
			name: "exported providers with per-module parameters",
			give: &module{id: "m", cells: []Cell{Provide(func(Lifecycle, *slog.Logger, Health, FullModuleID, ModuleID) *skipA { return nil })}},
			want: true,
		},
		{
			name: "cell.In parameter",
			give: &module{id: "m", cells: []Cell{Provide(func(skipIn) *skipB { return nil })}},
			want: true,
		},
		{
			name: "groups, configs, overrides and child modules",
			give: &module{id: "m", cells: []Cell{Group(
				Config(skipConfig{}),
				ConfigOverride(func(*skipConfig) {}),
				Module("child", "Child", Invoke(func() {})),
				Provide(func() *skipA { return nil }),
			)}},
			want: true,
		},
		{
			name: "private provider",
			give: &module{id: "m", cells: []Cell{ProvidePrivate(func() *skipA { return nil })}},
		},
		{
			name: "invoke",
			give: &module{id: "m", cells: []Cell{Invoke(func() {})}},
		},
		{
			name: "decorate",
			give: &module{id: "m", cells: []Cell{Decorate(func(*skipA) *skipA { return nil })}},
		},
		{
			name: "cell of another package",
			give: &module{id: "m", cells: []Cell{foreignCell{}}},
		},
		{
			name: "variadic constructor",
			give: &module{id: "m", cells: []Cell{Provide(func(...int) *skipA { return nil })}},
		},
		{
			name: "named per-module field",
			give: &module{id: "m", cells: []Cell{Provide(func(skipNamedIn) *skipA { return nil })}},
		},
		{
			name: "grouped per-module field",
			give: &module{id: "m", cells: []Cell{Provide(func(skipGroupIn) *skipA { return nil })}},
		},
		{
			name: "wanted module-private provider",
			give: &module{id: "m", cells: []Cell{Provide(func(*skipPrivateGroup) *skipA { return nil })}},
			opts: RootOptions{ModulePrivateProviders: []any{func() *skipPrivateGroup { return nil }}},
		},
		{
			name: "unwanted module-private provider",
			give: &module{id: "m", cells: []Cell{Provide(func() *skipA { return nil })}},
			opts: RootOptions{ModulePrivateProviders: []any{func() *skipPrivateGroup { return nil }}},
			want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Logger = func() *slog.Logger { return slog.New(slog.DiscardHandler) }
			opts.Health = func() Health { return NewHealthTree(nil).Root() }
			s := NewRootScope(nil, nil, opts)
			need, known := requiredTypes(tt.give.cells)
			wanted := func(t reflect.Type) bool { return !known || need[t] }
			local := newModuleLocals(tt.give.decorators(s.root, FullModuleID{"m"}))
			if got := known && tt.give.canSkipScope(s.root, local, wanted); got != tt.want {
				t.Errorf("canSkipScope = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestModuleNeedsScopeWithoutHiveLoggerOrHealth(t *testing.T) {
	m := &module{id: "m", cells: []Cell{Provide(func(Lifecycle) *skipA { return nil })}}
	s := NewRootScope(nil, nil, RootOptions{})
	local := newModuleLocals(m.decorators(s.root, FullModuleID{"m"}))
	if m.canSkipScope(s.root, local, func(reflect.Type) bool { return true }) {
		t.Error("canSkipScope = true without the hive's logger and health: decorations would depend on the parent's")
	}
}

type skipConfig struct{}

func (skipConfig) Flags(*pflag.FlagSet) {}

type foreignCell struct{}

func (foreignCell) Apply(*Scope) error    { return nil }
func (foreignCell) Info(*Scope) *InfoNode { return nil }
