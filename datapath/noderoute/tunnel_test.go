package noderoute_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/noderoute"
	"github.com/apiary-net/apiary/datapath/tunnel"
)

type handlersIn struct {
	cell.In

	Handlers []node.NodeHandler `group:"node-handlers"`
}

// TestRefusedWithTunnel: as Cilium, --auto-direct-node-routes and
// --routing-mode=tunnel do not go together; native routing takes it.
func TestRefusedWithTunnel(t *testing.T) {
	cells := func(got *int) []cell.Cell {
		return []cell.Cell{
			tunnel.Cell, noderoute.Cell,
			cell.Provide(
				func() datapath.NodeRoutes { return datapathtest.New() },
				func() localnode.Store { return localnode.NewStore(localnode.LocalNode{Name: "a"}) },
			),
			cell.Invoke(func(in handlersIn) {
				for _, h := range in.Handlers {
					if h != nil {
						*got++
					}
				}
			}),
		}
	}
	var n int
	_, err := celltest.Populate(t, []string{"auto-direct-node-routes=true", "routing-mode=tunnel"}, cells(&n)...)
	var ce *cell.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "--auto-direct-node-routes cannot be used with --routing-mode=tunnel") {
		t.Fatalf("populate = %v, want the config error naming both flags", err)
	}
	n = 0
	if _, err := celltest.Populate(t, []string{"auto-direct-node-routes=true", "routing-mode=native"}, cells(&n)...); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("native routing: %d route handlers, want 1", n)
	}
}
