package linux

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/tunnel"
)

// UpsertNodeRoute implements datapath.NodeRoutes: podCIDR via nodeIP,
// replacing any route to podCIDR. In tunnel routing (EnsureTunnelDevice)
// podCIDR goes through the tunnel device instead, whatever nodeIP's
// family, with the MTU under the tunnel header: its overlay program
// finds the node from the ipcache.
func (d *Datapath) UpsertNodeRoute(ctx context.Context, podCIDR netip.Prefix, nodeIP netip.Addr) error {
	tunnelIf := d.TunnelIfIndex()
	if tunnelIf == 0 && podCIDR.Addr().Is4() != nodeIP.Is4() {
		return fmt.Errorf("route %s via %s: the node IP is not of the CIDR's family", podCIDR, nodeIP)
	}
	r := d.nodeRoute(podCIDR, nodeIP, tunnelIf)
	if err := netnsutil.Run(d.host, func() error { return netlink.RouteReplace(r) }); err != nil {
		return fmt.Errorf("route %s via %s: %w", podCIDR, nodeIP, err)
	}
	d.log.Info("Installed route to node's pod CIDR", "pod-cidr", podCIDR, "node-ip", nodeIP, "tunnel", tunnelIf != 0)
	return nil
}

// DeleteNodeRoute implements datapath.NodeRoutes.
func (d *Datapath) DeleteNodeRoute(ctx context.Context, podCIDR netip.Prefix, nodeIP netip.Addr) error {
	r := d.nodeRoute(podCIDR, nodeIP, d.TunnelIfIndex())
	err := netnsutil.Run(d.host, func() error { return netlink.RouteDel(r) })
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete route %s via %s: %w", podCIDR, nodeIP, err)
	}
	d.log.Info("Removed route to node's pod CIDR", "pod-cidr", podCIDR, "node-ip", nodeIP)
	return nil
}

// nodeRoute is the route to podCIDR: via nodeIP, or through the tunnel
// device tunnelIf when it is not 0.
func (d *Datapath) nodeRoute(podCIDR netip.Prefix, nodeIP netip.Addr, tunnelIf int) *netlink.Route {
	dst := &net.IPNet{IP: net.IP(podCIDR.Addr().AsSlice()), Mask: net.CIDRMask(podCIDR.Bits(), podCIDR.Addr().BitLen())}
	if tunnelIf != 0 {
		return &netlink.Route{Dst: dst, LinkIndex: tunnelIf, Scope: netlink.SCOPE_LINK, MTU: tunnel.BaseMTU - tunnel.Overhead}
	}
	return &netlink.Route{Dst: dst, Gw: net.IP(nodeIP.AsSlice())}
}
