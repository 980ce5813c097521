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
// --routing-mode=tunnel do not go together; native routing takes it, and
// tunnel routing has the handler without it.
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
	for _, tt := range []struct {
		name  string
		flags []string
		want  int
	}{
		{"native with direct routes", []string{"auto-direct-node-routes=true", "routing-mode=native"}, 1},
		{"native without", []string{"routing-mode=native"}, 0},
		{"tunnel: routes through the device", []string{"routing-mode=tunnel"}, 1},
	} {
		n = 0
		if _, err := celltest.Populate(t, tt.flags, cells(&n)...); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n != tt.want {
			t.Errorf("%s: %d route handlers, want %d", tt.name, n, tt.want)
		}
	}
}

// TestTunnelRoutesAnyFamily: in tunnel routing a node with only an IPv4
// address still gets its IPv6 pod CIDR routed (the tunnel carries IPv6
// over IPv4).
func TestTunnelRoutesAnyFamily(t *testing.T) {
	var h node.NodeHandler
	f := datapathtest.New()
	_, err := celltest.Populate(t, []string{"routing-mode=tunnel"},
		tunnel.Cell, noderoute.Cell,
		cell.Provide(
			func() datapath.NodeRoutes { return f },
			func() localnode.Store { return localnode.NewStore(localnode.LocalNode{Name: "a"}) },
		),
		cell.Invoke(func(in handlersIn) { h = in.Handlers[0] }))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.NodeAdd(mkNode("b", "192.0.2.2", "10.0.2.0/24", "", "fd00:2::/64")); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for c, ip := range f.Routes() {
		got[c.String()] = ip.String()
	}
	if len(got) != 2 || got["10.0.2.0/24"] != "192.0.2.2" || got["fd00:2::/64"] != "192.0.2.2" {
		t.Fatalf("routes %v, want both pod CIDRs through node b's 192.0.2.2", got)
	}
}
