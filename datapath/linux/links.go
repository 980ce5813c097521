package linux

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// defaultMTU is the MTU of an endpoint's veth when the spec gives none.
const defaultMTU = 1500

// Datapath plumbs endpoints and node routes in one host network
// namespace. It is safe for concurrent use.
type Datapath struct {
	host netns.NsHandle
	log  *slog.Logger

	mu            sync.Mutex
	tunnelIfIndex int // the tunnel device's, once started in tunnel mode
}

var (
	_ datapath.EndpointLinks = (*Datapath)(nil)
	_ datapath.NodeRoutes    = (*Datapath)(nil)
	_ datapath.TunnelDevice  = (*Datapath)(nil)
)

// New returns a datapath working in the network namespace at
// hostNetNSPath, or in the caller's when it is empty. Close releases the
// namespace.
func New(hostNetNSPath string, log *slog.Logger) (*Datapath, error) {
	d := &Datapath{log: log, host: -1}
	if err := d.open(hostNetNSPath); err != nil {
		return nil, err
	}
	return d, nil
}

// open opens the host namespace.
func (d *Datapath) open(hostNetNSPath string) error {
	var err error
	if hostNetNSPath == "" {
		d.host, err = netns.Get()
	} else {
		d.host, err = netnsutil.Open(hostNetNSPath)
	}
	if err != nil {
		return fmt.Errorf("open host network namespace %q: %w", hostNetNSPath, err)
	}
	return nil
}

// Close releases the host namespace.
func (d *Datapath) Close() error {
	if !d.host.IsOpen() {
		return nil
	}
	err := d.host.Close()
	d.host = -1
	return err
}

// CreateEndpointLink implements datapath.EndpointLinks.
func (d *Datapath) CreateEndpointLink(ctx context.Context, spec datapath.EndpointLinkSpec) (datapath.EndpointLink, error) {
	if err := checkSpec(spec); err != nil {
		return datapath.EndpointLink{}, err
	}
	var out datapath.EndpointLink
	err := netnsutil.Run(d.host, func() error {
		var err error
		out, err = d.createInHost(spec)
		return err
	})
	if err != nil {
		return datapath.EndpointLink{}, fmt.Errorf("create endpoint link %s: %w", spec.HostIfName(), err)
	}
	d.log.Info("Created endpoint link", "endpoint", spec.ID, "host-if", out.IfName, "ifindex", out.IfIndex,
		"netns", spec.NetNSPath, "if", spec.IfName, "ipv4", spec.IPv4, "ipv6", spec.IPv6)
	return out, nil
}

// checkSpec validates a spec; errors name the field.
func checkSpec(spec datapath.EndpointLinkSpec) error {
	switch {
	case spec.ID == 0:
		return errors.New("create endpoint link: field ID: 0 is not an endpoint id")
	case spec.NetNSPath == "":
		return errors.New("create endpoint link: field NetNSPath: empty")
	case spec.IfName == "" || len(spec.IfName) > unix.IFNAMSIZ-1:
		return fmt.Errorf("create endpoint link: field IfName: %q is not 1 to %d characters", spec.IfName, unix.IFNAMSIZ-1)
	case !spec.IPv4.IsValid() && !spec.IPv6.IsValid():
		return errors.New("create endpoint link: fields IPv4, IPv6: no address")
	case spec.IPv4.IsValid() && !spec.GatewayIPv4.Is4():
		return errors.New("create endpoint link: field GatewayIPv4: an IPv4 endpoint needs an IPv4 gateway")
	case spec.IPv6.IsValid() && !spec.GatewayIPv6.Is6():
		return errors.New("create endpoint link: field GatewayIPv6: an IPv6 endpoint needs an IPv6 gateway")
	}
	return nil
}

// createInHost runs in the host namespace: it creates the pair with the
// peer already in the endpoint's namespace, then configures both sides;
// on an error it deletes the pair (which takes the routes with it).
func (d *Datapath) createInHost(spec datapath.EndpointLinkSpec) (datapath.EndpointLink, error) {
	epNS, err := netnsutil.Open(spec.NetNSPath)
	if err != nil {
		return datapath.EndpointLink{}, &datapath.InvalidSpecError{Field: "NetNSPath", Err: err}
	}
	defer epNS.Close()
	if epNS.Equal(d.host) {
		// Configuring it would replace the node's own default route.
		return datapath.EndpointLink{}, &datapath.InvalidSpecError{Field: "NetNSPath",
			Err: fmt.Errorf("%s is the node's own network namespace", spec.NetNSPath)}
	}
	if err := d.checkLinkNames(epNS, spec); err != nil {
		return datapath.EndpointLink{}, err
	}
	mtu := spec.MTU
	if mtu == 0 {
		mtu = defaultMTU
	}
	veth := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: spec.HostIfName(), MTU: mtu, TxQLen: -1},
		PeerName:  spec.IfName, PeerMTU: uint32(mtu), PeerNamespace: netlink.NsFd(int(epNS)),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return datapath.EndpointLink{}, fmt.Errorf("add veth pair %s/%s: %w", spec.HostIfName(), spec.IfName, err)
	}
	link, err := d.configureHostSide(spec)
	if err == nil {
		var mac string
		mac, err = configureEndpointSide(epNS, spec, link.MAC)
		link.ContainerMAC = mac
	}
	if err == nil {
		err = addHostNeighbours(spec, link)
	}
	if err != nil {
		if derr := deleteLink(spec.HostIfName()); derr != nil {
			err = errors.Join(err, derr)
		}
		return datapath.EndpointLink{}, err
	}
	return link, nil
}

// configureHostSide sets the sysctls, brings the host side up and
// routes the endpoint's addresses to it.
func (d *Datapath) configureHostSide(spec datapath.EndpointLinkSpec) (datapath.EndpointLink, error) {
	name := spec.HostIfName()
	l, err := netlink.LinkByName(name)
	if err != nil {
		return datapath.EndpointLink{}, fmt.Errorf("find %s: %w", name, err)
	}
	sysctls := [][2]string{{"net.ipv4.conf." + name + ".rp_filter", "0"}}
	if spec.IPv4.IsValid() {
		sysctls = append(sysctls, [2]string{"net.ipv4.ip_forward", "1"})
	}
	if spec.IPv6.IsValid() {
		sysctls = append(sysctls, [2]string{"net.ipv6.conf.all.forwarding", "1"})
	}
	for _, s := range sysctls {
		if err := writeSysctl(s[0], s[1]); err != nil {
			return datapath.EndpointLink{}, err
		}
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return datapath.EndpointLink{}, fmt.Errorf("set %s up: %w", name, err)
	}
	for _, ip := range []netip.Addr{spec.IPv4, spec.IPv6} {
		if !ip.IsValid() {
			continue
		}
		r := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: hostNet(ip), Scope: netlink.SCOPE_LINK}
		if err := netlink.RouteReplace(r); err != nil {
			return datapath.EndpointLink{}, fmt.Errorf("route %s to %s: %w", ip, name, err)
		}
	}
	return datapath.EndpointLink{IfName: name, IfIndex: l.Attrs().Index, MAC: l.Attrs().HardwareAddr.String()}, nil
}

// addHostNeighbours adds static neighbour entries for the endpoint's
// addresses on the host side, so the host never has to resolve them.
func addHostNeighbours(spec datapath.EndpointLinkSpec, link datapath.EndpointLink) error {
	mac, err := net.ParseMAC(link.ContainerMAC)
	if err != nil {
		return fmt.Errorf("parse MAC of %s: %w", spec.IfName, err)
	}
	for _, ip := range []netip.Addr{spec.IPv4, spec.IPv6} {
		if ip.IsValid() {
			if err := setNeighbour(link.IfIndex, ip, mac); err != nil {
				return err
			}
		}
	}
	return nil
}

func setNeighbour(ifindex int, ip netip.Addr, mac net.HardwareAddr) error {
	family := netlink.FAMILY_V4
	if ip.Is6() {
		family = netlink.FAMILY_V6
	}
	n := &netlink.Neigh{LinkIndex: ifindex, Family: family, State: netlink.NUD_PERMANENT,
		IP: net.IP(ip.AsSlice()), HardwareAddr: mac}
	if err := netlink.NeighSet(n); err != nil {
		return fmt.Errorf("set neighbour %s lladdr %s: %w", ip, mac, err)
	}
	return nil
}

// hostNet is the /32 or /128 of ip.
func hostNet(ip netip.Addr) *net.IPNet {
	return &net.IPNet{IP: net.IP(ip.AsSlice()), Mask: net.CIDRMask(ip.BitLen(), ip.BitLen())}
}

// deleteLink deletes a link of the calling thread's namespace; a link
// that does not exist is not an error.
func deleteLink(name string) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("find %s: %w", name, err)
	}
	if err := netlink.LinkDel(l); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// DeleteEndpointLink implements datapath.EndpointLinks: deleting the
// host side deletes the peer and every route and neighbour through
// either.
func (d *Datapath) DeleteEndpointLink(ctx context.Context, spec datapath.EndpointLinkSpec) error {
	if err := netnsutil.Run(d.host, func() error { return deleteLink(spec.HostIfName()) }); err != nil {
		return fmt.Errorf("delete endpoint link: %w", err)
	}
	d.log.Info("Deleted endpoint link", "endpoint", spec.ID, "host-if", spec.HostIfName())
	return nil
}

// LookupEndpointLink implements datapath.EndpointLinks. ContainerMAC is
// left empty: the peer is in another namespace.
func (d *Datapath) LookupEndpointLink(ctx context.Context, id datapath.EndpointID) (datapath.EndpointLink, error) {
	var out datapath.EndpointLink
	err := netnsutil.Run(d.host, func() error {
		l, err := netlink.LinkByName(id.HostIfName())
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				return datapath.ErrLinkNotFound
			}
			return err
		}
		if _, ok := l.(*netlink.Veth); !ok {
			return fmt.Errorf("%s is a %s, not a veth", id.HostIfName(), l.Type())
		}
		out = datapath.EndpointLink{IfName: l.Attrs().Name, IfIndex: l.Attrs().Index, MAC: l.Attrs().HardwareAddr.String()}
		return nil
	})
	if err != nil {
		return datapath.EndpointLink{}, fmt.Errorf("lookup endpoint link %s: %w", id.HostIfName(), err)
	}
	return out, nil
}

// checkLinkNames runs in the host namespace before the pair is created.
// The endpoint's interface name taken in its namespace is the caller's
// error (field IfName). A host-side veth of the endpoint's name is a
// leftover: the endpoint manager creates a link only for an id it does
// not hold, so an lxc<id> already there was left by an agent killed
// while creating it; it is deleted first (with its peer, which may hold
// the interface name) so that the id can be used again.
func (d *Datapath) checkLinkNames(epNS netns.NsHandle, spec datapath.EndpointLinkSpec) error {
	if stale, err := netlink.LinkByName(spec.HostIfName()); err == nil {
		d.log.Warn("Deleting a leftover host-side interface of an endpoint that does not exist (an agent was stopped while creating it)",
			"interface", spec.HostIfName(), "endpoint", spec.ID)
		if err := netlink.LinkDel(stale); err != nil {
			return fmt.Errorf("delete leftover interface %s: %w", spec.HostIfName(), err)
		}
	}
	return netnsutil.Run(epNS, func() error {
		if _, err := netlink.LinkByName(spec.IfName); err == nil {
			return &datapath.InvalidSpecError{Field: "IfName",
				Err: fmt.Errorf("%s exists in network namespace %s", spec.IfName, spec.NetNSPath)}
		}
		return nil
	})
}
