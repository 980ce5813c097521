package datapath

import (
	"context"
	"net/netip"
)

// NodeRoutes installs the routes to other nodes' pod CIDRs (native
// routing: through the other node's IP, which this node reaches
// directly; tunnel routing: through the tunnel device).
type NodeRoutes interface {
	// UpsertNodeRoute routes podCIDR via nodeIP, replacing a route to
	// the same CIDR through another node.
	UpsertNodeRoute(ctx context.Context, podCIDR netip.Prefix, nodeIP netip.Addr) error
	// DeleteNodeRoute removes the route to podCIDR via nodeIP; a route
	// that is gone (or goes through another node now) is not an error.
	DeleteNodeRoute(ctx context.Context, podCIDR netip.Prefix, nodeIP netip.Addr) error
}

// TunnelDevice is the node's tunnel device in tunnel routing
// (--routing-mode=tunnel, docs/datapath.md): datapath/linux creates it,
// the loader attaches the overlay program to it and has the endpoint
// programs encapsulate to it.
type TunnelDevice interface {
	// TunnelIfIndex returns the device's ifindex once the datapath has
	// started; 0 in native routing.
	TunnelIfIndex() int
}
