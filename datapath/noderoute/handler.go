package noderoute

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/tunnel"
)

// Cell registers the node-routes handler with the node manager when
// --auto-direct-node-routes is set. It needs datapath.NodeRoutes and the
// local-node store.
var Cell = cell.Module("node-routes", "Routes to the pod CIDRs of remote nodes",
	cell.Config(DefaultConfig),
	cell.Provide(newHandlerOut),
)

// Config configures the node routes.
type Config struct {
	// AutoDirectNodeRoutes installs a route to each remote node's pod
	// CIDRs via its IP (Cilium's flag: the nodes share an L2 network or
	// otherwise reach each other's IPs directly).
	AutoDirectNodeRoutes bool
}

// DefaultConfig installs no routes.
var DefaultConfig = Config{}

// Flags registers --auto-direct-node-routes.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.Bool("auto-direct-node-routes", def.AutoDirectNodeRoutes,
		"Route each remote node's pod CIDRs via its node IP (native routing between nodes that reach each other directly)")
}

// routeTimeout bounds one route change.
const routeTimeout = 10 * time.Second

// route is one route to a pod CIDR via a node IP.
type route struct {
	cidr netip.Prefix
	via  netip.Addr
}

// Handler is the node handler installing the routes.
type Handler struct {
	routes datapath.NodeRoutes
	local  localnode.Store
	log    *slog.Logger
	// anyFamily (tunnel routing): a pod CIDR is routed when the node
	// has an IP of either family, the tunnel's underlay being either.
	anyFamily bool
}

var _ node.NodeHandler = (*Handler)(nil)

// New returns the handler; nodes with local's name and cluster are
// skipped.
func New(routes datapath.NodeRoutes, local localnode.Store, log *slog.Logger) *Handler {
	return &Handler{routes: routes, local: local, log: log}
}

type handlerParams struct {
	cell.In

	Config  Config
	Routing tunnel.Config `optional:"true"`
	Routes  datapath.NodeRoutes
	Local   localnode.Store
	Log     *slog.Logger
}

// newHandlerOut registers the handler with --auto-direct-node-routes
// (routes via the node IPs) and in tunnel routing (routes through the
// tunnel device, for the node's own traffic to other nodes' pods:
// datapath/linux picks the device); the two are refused together.
func newHandlerOut(p handlerParams) (node.NodeHandlerOut, error) {
	switch {
	case p.Routing.Enabled() && p.Config.AutoDirectNodeRoutes:
		// As Cilium: in tunnel mode packets to other nodes' pods go
		// through the tunnel, never through direct routes.
		return node.NodeHandlerOut{}, &cell.ConfigError{Err: errors.New(
			"--auto-direct-node-routes cannot be used with --routing-mode=tunnel: packets to other nodes' pods go through the tunnel")}
	case p.Routing.Enabled():
		h := New(p.Routes, p.Local, p.Log)
		h.anyFamily = true
		return node.NodeHandlerOut{Handler: h}, nil
	case p.Config.AutoDirectNodeRoutes:
		return node.NodeHandlerOut{Handler: New(p.Routes, p.Local, p.Log)}, nil
	}
	return node.NodeHandlerOut{}, nil // a nil handler is skipped
}

// Name implements node.NodeHandler.
func (h *Handler) Name() string { return "node-routes" }

// routesOf returns the routes a node needs: none for the local node.
func (h *Handler) routesOf(n node.Node) []route {
	l := h.local.Get()
	if n.Name == l.Name && n.Cluster == l.Cluster.ClusterName {
		return nil
	}
	var out []route
	add := func(via netip.Addr, cidrs ...netip.Prefix) {
		if !via.IsValid() {
			return
		}
		for _, c := range cidrs {
			if c.IsValid() {
				out = append(out, route{cidr: c, via: via})
			}
		}
	}
	via4, via6 := n.PrimaryIP(false), n.PrimaryIP(true)
	if h.anyFamily && !via4.IsValid() {
		via4 = via6
	}
	if h.anyFamily && !via6.IsValid() {
		via6 = via4
	}
	add(via4, append([]netip.Prefix{n.IPv4AllocCIDR}, n.IPv4SecondaryAllocCIDRs...)...)
	add(via6, append([]netip.Prefix{n.IPv6AllocCIDR}, n.IPv6SecondaryAllocCIDRs...)...)
	return out
}

func (h *Handler) upsert(rs []route) error {
	ctx, cancel := context.WithTimeout(context.Background(), routeTimeout)
	defer cancel()
	var errs []error
	for _, r := range rs {
		errs = append(errs, h.routes.UpsertNodeRoute(ctx, r.cidr, r.via))
	}
	return errors.Join(errs...)
}

func (h *Handler) remove(rs []route) error {
	ctx, cancel := context.WithTimeout(context.Background(), routeTimeout)
	defer cancel()
	var errs []error
	for _, r := range rs {
		errs = append(errs, h.routes.DeleteNodeRoute(ctx, r.cidr, r.via))
	}
	return errors.Join(errs...)
}

// NodeAdd implements node.NodeHandler.
func (h *Handler) NodeAdd(n node.Node) error { return h.upsert(h.routesOf(n)) }

// NodeUpdate implements node.NodeHandler: the new routes are installed,
// then the old ones the node no longer has are removed.
func (h *Handler) NodeUpdate(old, updated node.Node) error {
	now := h.routesOf(updated)
	err := h.upsert(now)
	var gone []route
	for _, r := range h.routesOf(old) {
		if !containsCIDR(now, r.cidr) {
			gone = append(gone, r)
		}
	}
	return errors.Join(err, h.remove(gone))
}

func containsCIDR(rs []route, cidr netip.Prefix) bool {
	for _, r := range rs {
		if r.cidr == cidr {
			return true
		}
	}
	return false
}

// NodeDelete implements node.NodeHandler.
func (h *Handler) NodeDelete(n node.Node) error { return h.remove(h.routesOf(n)) }

// NodeValidateImplementation implements node.NodeHandler: it installs
// the node's routes again, repairing what was removed behind our back.
func (h *Handler) NodeValidateImplementation(n node.Node) error { return h.upsert(h.routesOf(n)) }
