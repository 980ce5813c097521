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
)

// UpsertNodeRoute implements datapath.NodeRoutes: podCIDR via nodeIP,
// replacing any route to podCIDR.
func (d *Datapath) UpsertNodeRoute(ctx context.Context, podCIDR netip.Prefix, nodeIP netip.Addr) error {
	if podCIDR.Addr().Is4() != nodeIP.Is4() {
		return fmt.Errorf("route %s via %s: the node IP is not of the CIDR's family", podCIDR, nodeIP)
	}
	r := nodeRoute(podCIDR, nodeIP)
	if err := netnsutil.Run(d.host, func() error { return netlink.RouteReplace(r) }); err != nil {
		return fmt.Errorf("route %s via %s: %w", podCIDR, nodeIP, err)
	}
	d.log.Info("Installed route to node's pod CIDR", "pod-cidr", podCIDR, "node-ip", nodeIP)
	return nil
}

// DeleteNodeRoute implements datapath.NodeRoutes.
func (d *Datapath) DeleteNodeRoute(ctx context.Context, podCIDR netip.Prefix, nodeIP netip.Addr) error {
	r := nodeRoute(podCIDR, nodeIP)
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

func nodeRoute(podCIDR netip.Prefix, nodeIP netip.Addr) *netlink.Route {
	return &netlink.Route{
		Dst: &net.IPNet{IP: net.IP(podCIDR.Addr().AsSlice()), Mask: net.CIDRMask(podCIDR.Bits(), podCIDR.Addr().BitLen())},
		Gw:  net.IP(nodeIP.AsSlice()),
	}
}
