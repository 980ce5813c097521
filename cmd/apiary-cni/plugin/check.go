package plugin

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"

	"github.com/apiary-net/apiary/cells/api/models"
)

// cmdCheck checks that the container's endpoint exists in the agent,
// that its interface in the namespace has the endpoint's MAC, addresses
// and default routes, and that the result of ADD (prevResult) names the
// same addresses.
func cmdCheck(args *skel.CmdArgs) error {
	c, err := start("CHECK", args)
	if err != nil {
		return types.NewError(types.ErrDecodingFailure, err.Error(), "")
	}
	defer c.close()
	ep, _, err := findEndpoint(c.ctx, c.client, args.ContainerID, args.IfName)
	if err != nil {
		return c.fail("CHECK", err)
	}
	if ep == nil {
		return c.fail("CHECK", fmt.Errorf("container %s interface %s has no endpoint in apiary-agent at %s",
			args.ContainerID, args.IfName, c.conf.SocketPath))
	}
	if err := checkEndpoint(c.conf, args, ep); err != nil {
		return c.fail("CHECK", fmt.Errorf("endpoint %d: %w", ep.ID, err))
	}
	c.log.Info("Endpoint checked", "endpoint", ep.ID)
	return nil
}

// checkEndpoint compares the endpoint with the namespace and prevResult
// and reports every difference.
func checkEndpoint(conf *NetConf, args *skel.CmdArgs, ep *models.Endpoint) error {
	var errs []error
	if ep.NetNSPath != args.Netns {
		errs = append(errs, fmt.Errorf("it is in %s, not %s", ep.NetNSPath, args.Netns))
	}
	if ep.State == "disconnecting" || ep.State == "not-ready" {
		errs = append(errs, fmt.Errorf("state %s: %s", ep.State, ep.Error))
	}
	want, err := endpointAddrs(ep)
	if err != nil {
		return err
	}
	v, err := inspect(args.Netns, args.IfName)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if v.mac != ep.ContainerMAC {
		errs = append(errs, fmt.Errorf("%s has MAC %s, the endpoint %s", args.IfName, v.mac, ep.ContainerMAC))
	}
	for _, a := range want {
		if !slices.Contains(v.addrs, a) {
			errs = append(errs, fmt.Errorf("%s has no address %s (it has %v)", args.IfName, a, v.addrs))
		}
		gw := v.gw4
		if a.Addr().Is6() {
			gw = v.gw6
		}
		if !gw.IsValid() {
			errs = append(errs, fmt.Errorf("%s has no default route for %s", args.IfName, a.Addr()))
		}
	}
	if err := checkPrevResult(conf, want); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkPrevResult compares the addresses of the ADD result the runtime
// kept with the endpoint's (no prevResult: nothing to compare).
func checkPrevResult(conf *NetConf, want []netip.Prefix) error {
	if conf.PrevResult == nil {
		return nil
	}
	prev, err := types100.NewResultFromResult(conf.PrevResult)
	if err != nil {
		return fmt.Errorf("prevResult: %w", err)
	}
	var got []netip.Prefix
	for _, ip := range prev.IPs {
		a, _ := netip.AddrFromSlice(ip.Address.IP)
		ones, _ := ip.Address.Mask.Size()
		got = append(got, netip.PrefixFrom(a.Unmap(), ones))
	}
	slices.SortFunc(got, netip.Prefix.Compare)
	w := slices.SortedFunc(slices.Values(want), netip.Prefix.Compare)
	if !slices.Equal(got, w) {
		return fmt.Errorf("prevResult has addresses %v, the endpoint %v", got, w)
	}
	return nil
}
