package plugin

import (
	"net/http"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
)

// cmdDel deletes the container's endpoint. It is idempotent: no
// endpoint, or one deleted meanwhile, is success, and so is a namespace
// that is gone (the agent deletes the host side of the veth either way).
func cmdDel(args *skel.CmdArgs) error {
	c, err := start("DEL", args)
	if err != nil {
		return types.NewError(types.ErrDecodingFailure, err.Error(), "")
	}
	defer c.close()
	ep, _, err := findEndpoint(c.ctx, c.client, args.ContainerID, args.IfName)
	if err != nil {
		return c.fail("DEL", err)
	}
	if ep == nil {
		c.log.Info("No endpoint to delete")
		return nil
	}
	if err := c.client.EndpointDelete(c.ctx, ep.ID); err != nil && !isStatus(err, http.StatusNotFound) {
		return c.fail("DEL", err)
	}
	c.log.Info("Endpoint deleted", "endpoint", ep.ID)
	return nil
}
