package plugin

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"

	"github.com/apiary-net/apiary/cells/api/models"
)

// endpointAddrs are the endpoint's addresses as the namespace holds
// them: /32 and /128.
func endpointAddrs(ep *models.Endpoint) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range []string{ep.IPv4, ep.IPv6} {
		if s == "" {
			continue
		}
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("endpoint %d: address %q: %w", ep.ID, s, err)
		}
		out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
	}
	return out, nil
}

// buildResult is the CNI result of the endpoint: the host side of the
// veth and the container side in its sandbox, the addresses on the
// container side with their gateways, and the default routes.
func buildResult(conf *NetConf, netnsPath string, ep *models.Endpoint, v nsView) (*types100.Result, error) {
	addrs, err := endpointAddrs(ep)
	if err != nil {
		return nil, err
	}
	res := &types100.Result{
		CNIVersion: types100.ImplementedSpecVersion,
		Interfaces: []*types100.Interface{
			{Name: ep.HostInterface, Mac: ep.HostMAC},
			{Name: ep.InterfaceName, Mac: ep.ContainerMAC, Sandbox: netnsPath},
		},
		DNS: conf.DNS,
	}
	for _, a := range addrs {
		gw, def := v.gw4, net.IPv4zero
		if a.Addr().Is6() {
			gw, def = v.gw6, net.IPv6zero
		}
		if !gw.IsValid() {
			return nil, fmt.Errorf("endpoint %d: no default route for %s through %s in %s", ep.ID, a.Addr(), ep.InterfaceName, netnsPath)
		}
		res.IPs = append(res.IPs, &types100.IPConfig{Interface: types100.Int(1), Address: ipNet(a), Gateway: gw.AsSlice()})
		res.Routes = append(res.Routes, &types.Route{Dst: net.IPNet{IP: def, Mask: net.CIDRMask(0, a.Addr().BitLen())}, GW: gw.AsSlice()})
	}
	return res, nil
}

func ipNet(p netip.Prefix) net.IPNet {
	return net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
