package status_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
)

func okProbe(context.Context) status.Report { return status.Report{State: status.Ok} }

// providerModule registers providers with the given names in a module.
func providerModule(id string, names ...string) cell.Cell {
	var cells []cell.Cell
	for _, name := range names {
		cells = append(cells, cell.Provide(func(m cell.FullModuleID) status.ProviderOut {
			return status.NewProviderOut(m, name, okProbe)
		}))
	}
	return cell.Module(id, "Providers "+id, cells...)
}

func TestOrder(t *testing.T) {
	var c status.Collector
	celltest.Start(t,
		providerModule("zeta", "Zeta 2", "Zeta 1"),
		providerModule("alpha", "Alpha"),
		status.Cell,
		cell.Provide(func() status.ProviderOut { return status.NewProviderOut(nil, "No module", okProbe) }),
		celltest.Capture(&c),
	)
	var got []string
	for _, e := range c.Status().Entries {
		got = append(got, e.Name)
	}
	want := "Zeta 1,Zeta 2,Alpha,Controllers,Hive,No module"
	if strings.Join(got, ",") != want {
		t.Errorf("order = %v, want %s (module declaration order, then name)", got, want)
	}
}

func TestInvalidProviders(t *testing.T) {
	tests := []struct {
		name string
		give []cell.Cell
		want string
	}{
		{
			name: "duplicate name",
			give: []cell.Cell{providerModule("one", "Thing"), providerModule("two", "Thing")},
			want: `status provider "Thing": registered twice, by module "one" and by module "two"`,
		},
		{
			name: "clash with a built-in",
			give: []cell.Cell{providerModule("mine", "Hive")},
			want: `status provider "Hive": registered twice`,
		},
		{
			name: "empty name",
			give: []cell.Cell{providerModule("nameless", "")},
			want: `status provider of module "nameless": empty name`,
		},
		{
			name: "nil probe",
			give: []cell.Cell{cell.Provide(func() status.ProviderOut { return status.NewProviderOut(nil, "Nil", nil) })},
			want: `status provider "Nil" of module "": nil probe`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c status.Collector
			cells := append([]cell.Cell{status.Cell, celltest.Capture(&c)}, tt.give...)
			err := celltest.NewHive(t, cells...).Populate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Populate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
