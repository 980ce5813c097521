package hive_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
)

type secret struct{ owner string }

func TestProvidePrivateVisibility(t *testing.T) {
	private := cell.ProvidePrivate(func() *secret { return &secret{owner: "vault"} })
	t.Run("module and children see it", func(t *testing.T) {
		var inModule, inChild *secret
		celltest.New(t, nil, cell.Module("vault", "Vault",
			private,
			cell.Invoke(func(s *secret) { inModule = s }),
			cell.Module("teller", "Teller", cell.Invoke(func(s *secret) { inChild = s })),
		))
		if inModule == nil || inChild != inModule {
			t.Errorf("module got %v, child got %v: want the same object", inModule, inChild)
		}
	})
	t.Run("sibling module cannot see it", func(t *testing.T) {
		h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)},
			cell.Module("vault", "Vault", private),
			cell.Module("thief", "Thief", cell.Invoke(func(*secret) {})),
		)
		err := h.Populate()
		if err == nil || !strings.Contains(err.Error(), "missing type: *hive_test.secret") {
			t.Errorf("Populate() = %v, want missing *secret for the sibling", err)
		}
	})
	t.Run("root cannot see it", func(t *testing.T) {
		h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)},
			cell.Module("vault", "Vault", private),
			cell.Invoke(func(*secret) {}),
		)
		if err := h.Populate(); err == nil {
			t.Error("Populate() succeeded; the root scope saw a private provider")
		}
	})
	t.Run("exported provider is visible everywhere", func(t *testing.T) {
		var got *secret
		celltest.New(t, nil,
			cell.Module("vault", "Vault", cell.Provide(func() *secret { return &secret{owner: "vault"} })),
			cell.Module("bank", "Bank", cell.Invoke(func(s *secret) { got = s })),
		)
		if got == nil || got.owner != "vault" {
			t.Errorf("got %v", got)
		}
	})
}

type greeter interface{ Greet() string }

type plainGreeter struct{}

func (plainGreeter) Greet() string { return "hello" }

type loudGreeter struct{ greeter }

func (l loudGreeter) Greet() string { return strings.ToUpper(l.greeter.Greet()) + "!" }

func TestDecorate(t *testing.T) {
	var inside, outside string
	celltest.New(t, nil,
		cell.Provide(func() greeter { return plainGreeter{} }),
		cell.Decorate(
			func(g greeter) greeter { return loudGreeter{g} },
			cell.Module("inside", "Inside", cell.Invoke(func(g greeter) { inside = g.Greet() })),
		),
		cell.Module("outside", "Outside", cell.Invoke(func(g greeter) { outside = g.Greet() })),
	)
	if inside != "HELLO!" || outside != "hello" {
		t.Errorf("inside = %q (want HELLO!), outside = %q (want hello)", inside, outside)
	}
}

func TestGroupAddsNoScope(t *testing.T) {
	var got *secret
	celltest.New(t, nil, cell.Module("m", "M",
		cell.Group(cell.ProvidePrivate(func() *secret { return &secret{} })),
		cell.Invoke(func(s *secret) { got = s }),
	))
	if got == nil {
		t.Error("a private provider inside a group is not visible to its module")
	}
}

func TestModuleScopedObjects(t *testing.T) {
	var ids []string
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	h := hive.NewWithOptions(hive.Options{Logger: log},
		cell.Module("agent", "Agent",
			cell.Invoke(func(id cell.FullModuleID, l *slog.Logger) { ids = append(ids, id.String()); l.Info("Hello") }),
			cell.Module("api-server", "API", cell.Invoke(func(id cell.FullModuleID, mid cell.ModuleID, l *slog.Logger) {
				ids = append(ids, id.String()+"/"+string(mid))
				l.Info("Hello")
			})),
		))
	if err := h.Populate(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, " ") != "agent agent.api-server/api-server" {
		t.Errorf("module ids = %q", ids)
	}
	if !strings.Contains(logs.String(), "msg=Hello module=agent\n") ||
		!strings.Contains(logs.String(), "msg=Hello module=agent.api-server\n") {
		t.Errorf("each log line should carry exactly one module attribute with the full id:\n%s", logs.String())
	}
	mods := h.Modules()
	if len(mods) != 2 || mods[1].ID.String() != "agent.api-server" || mods[1].Title != "API" {
		t.Errorf("Modules() = %+v", mods)
	}
}

func TestModuleIDValidation(t *testing.T) {
	for _, id := range []string{"", "API", "api_server", "-api", "api-", "1api", "api..x", "api server"} {
		t.Run(id, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("cell.Module(%q) did not panic", id)
				}
			}()
			cell.Module(id, "Title")
		})
	}
	for _, id := range []string{"api", "api-server", "remote-etcd-c2", "ipv6"} {
		cell.Module(id, "Title") // must not panic
	}
}
