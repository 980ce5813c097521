package plugin

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// errNoInterface: the namespace has no interface of the name.
var errNoInterface = errors.New("no such interface")

// nsView is what a container's namespace holds for its interface.
type nsView struct {
	mac string
	// addrs are the interface's global addresses.
	addrs []netip.Prefix
	// gw4 and gw6 are the gateways of the default routes through it.
	gw4, gw6 netip.Addr
}

// inspect reads the interface ifName of the namespace at path.
func inspect(path, ifName string) (nsView, error) {
	var v nsView
	err := netnsutil.RunPath(path, func() error {
		l, err := netlink.LinkByName(ifName)
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				return fmt.Errorf("%s in %s: %w", ifName, path, errNoInterface)
			}
			return fmt.Errorf("find %s in %s: %w", ifName, path, err)
		}
		v.mac = l.Attrs().HardwareAddr.String()
		addrs, err := netlink.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			return fmt.Errorf("list addresses of %s: %w", ifName, err)
		}
		for _, a := range addrs {
			if a.Scope != unix.RT_SCOPE_UNIVERSE {
				continue
			}
			ip, _ := netip.AddrFromSlice(a.IP)
			ones, _ := a.Mask.Size()
			v.addrs = append(v.addrs, netip.PrefixFrom(ip.Unmap(), ones))
		}
		routes, err := netlink.RouteList(l, netlink.FAMILY_ALL)
		if err != nil {
			return fmt.Errorf("list routes of %s: %w", ifName, err)
		}
		for _, r := range routes {
			if r.Gw == nil || (r.Dst != nil && !isDefault(r.Dst.String())) {
				continue
			}
			gw, _ := netip.AddrFromSlice(r.Gw)
			if gw = gw.Unmap(); gw.Is4() {
				v.gw4 = gw
			} else {
				v.gw6 = gw
			}
		}
		return nil
	})
	return v, err
}

func isDefault(dst string) bool { return dst == "0.0.0.0/0" || dst == "::/0" }
