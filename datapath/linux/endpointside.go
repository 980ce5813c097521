package linux

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// configureEndpointSide configures the peer inside the endpoint's
// namespace, as Cilium does: the addresses as /32 and /128, a link
// route to each gateway, a static neighbour entry mapping the gateway to
// the host side's MAC, and default routes via the gateways. It returns
// the peer's MAC.
func configureEndpointSide(ns netns.NsHandle, spec datapath.EndpointLinkSpec, hostMAC string) (string, error) {
	mac, err := net.ParseMAC(hostMAC)
	if err != nil {
		return "", fmt.Errorf("parse MAC of %s: %w", spec.HostIfName(), err)
	}
	var peerMAC string
	err = netnsutil.Run(ns, func() error {
		l, err := netlink.LinkByName(spec.IfName)
		if err != nil {
			return fmt.Errorf("find %s in %s: %w", spec.IfName, spec.NetNSPath, err)
		}
		peerMAC = l.Attrs().HardwareAddr.String()
		if err := netlink.LinkSetUp(l); err != nil {
			return fmt.Errorf("set %s up: %w", spec.IfName, err)
		}
		for _, f := range []struct{ ip, gw netip.Addr }{{spec.IPv4, spec.GatewayIPv4}, {spec.IPv6, spec.GatewayIPv6}} {
			if !f.ip.IsValid() {
				continue
			}
			if err := configureFamily(l, f.ip, f.gw, mac); err != nil {
				return fmt.Errorf("in %s: %w", spec.NetNSPath, err)
			}
		}
		return nil
	})
	return peerMAC, err
}

// configureFamily adds one family's address, gateway route, gateway
// neighbour and default route on l.
func configureFamily(l netlink.Link, ip, gw netip.Addr, hostMAC net.HardwareAddr) error {
	addr := &netlink.Addr{IPNet: hostNet(ip)}
	if ip.Is6() {
		addr.Flags = unix.IFA_F_NODAD // the address is ours alone: no duplicate detection delay
	}
	if err := netlink.AddrAdd(l, addr); err != nil {
		return fmt.Errorf("add address %s to %s: %w", ip, l.Attrs().Name, err)
	}
	idx := l.Attrs().Index
	// A second interface of a pod (another endpoint in the same
	// namespace) must not take the first one's routes: the gateway and
	// default routes are added only where the namespace has none.
	first, err := addRouteUnlessExists(&netlink.Route{LinkIndex: idx, Dst: hostNet(gw), Scope: netlink.SCOPE_LINK})
	if err != nil {
		return fmt.Errorf("route to gateway %s: %w", gw, err)
	}
	if err := setNeighbour(idx, gw, hostMAC); err != nil {
		return err
	}
	if !first {
		return nil // the pod's first interface routes through the gateway
	}
	def := &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}
	if ip.Is6() {
		def = &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}
	}
	if _, err := addRouteUnlessExists(&netlink.Route{LinkIndex: idx, Dst: def, Gw: net.IP(gw.AsSlice())}); err != nil {
		return fmt.Errorf("default route via %s: %w", gw, err)
	}
	return nil
}

// addRouteUnlessExists adds r and reports whether it did; a route to the
// same destination already there (the pod's first interface's) is kept.
func addRouteUnlessExists(r *netlink.Route) (bool, error) {
	err := netlink.RouteAdd(r)
	if errors.Is(err, unix.EEXIST) {
		return false, nil
	}
	return err == nil, err
}
