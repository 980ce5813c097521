package plugin

import (
	"fmt"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/apiary-net/apiary/cells/api/models"
)

// cmdAdd creates the container's endpoint (or finds the one an earlier
// ADD created) and prints its result.
func cmdAdd(args *skel.CmdArgs) error {
	c, err := start("ADD", args)
	if err != nil {
		return types.NewError(types.ErrDecodingFailure, err.Error(), "")
	}
	defer c.close()
	a, err := parseArgs(args.Args)
	if err != nil {
		return types.NewError(types.ErrInvalidEnvironmentVariables, err.Error(), "")
	}
	ls, err := endpointLabels(c.conf, a)
	if err != nil {
		return types.NewError(types.ErrInvalidEnvironmentVariables, err.Error(), "")
	}
	req := models.EndpointRequest{NetNSPath: args.Netns, InterfaceName: args.IfName, Labels: ls,
		ContainerID: args.ContainerID, PodNamespace: a.podNamespace, PodName: a.podName}
	ep, created, err := ensureEndpoint(c.ctx, c.client, args.ContainerID, req)
	if err != nil {
		return c.fail("ADD", err)
	}
	if !created && ep.State == "disconnecting" {
		return c.fail("ADD", types.NewError(types.ErrTryAgainLater,
			fmt.Sprintf("ADD: endpoint %d of container %s is being deleted: %s", ep.ID, args.ContainerID, ep.Error), ""))
	}
	if ep.NetNSPath != args.Netns {
		return c.fail("ADD", fmt.Errorf("container %s interface %s already has endpoint %d in %s, not %s",
			args.ContainerID, args.IfName, ep.ID, ep.NetNSPath, args.Netns))
	}
	v, err := inspect(args.Netns, args.IfName)
	if err != nil {
		return c.fail("ADD", fmt.Errorf("endpoint %d: %w", ep.ID, err))
	}
	res, err := buildResult(c.conf, args.Netns, ep, v)
	if err != nil {
		return c.fail("ADD", err)
	}
	c.log.Info("Endpoint ready", "endpoint", ep.ID, "created", created, "ipv4", ep.IPv4, "ipv6", ep.IPv6,
		"identity", ep.Identity, "pod", a.podNamespace+"/"+a.podName)
	return types.PrintResult(res, c.conf.CNIVersion)
}
