package plugin

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
)

// cmdGC (spec 1.1) deletes the endpoints the plugin created (they carry
// a container id) whose container interface is not among the runtime's
// valid attachments: what a lost DEL left. Endpoints created through the
// API without a container id are not the runtime's and stay.
func cmdGC(args *skel.CmdArgs) error {
	c, err := start("GC", args)
	if err != nil {
		return types.NewError(types.ErrDecodingFailure, err.Error(), "")
	}
	defer c.close()
	valid := make(map[types.GCAttachment]bool, len(c.conf.ValidAttachments))
	for _, a := range c.conf.ValidAttachments {
		valid[a] = true
	}
	eps, err := c.client.Endpoints(c.ctx)
	if err != nil {
		return c.fail("GC", err)
	}
	var errs []error
	for _, ep := range eps {
		if ep.ContainerID == "" || valid[types.GCAttachment{ContainerID: ep.ContainerID, IfName: ep.InterfaceName}] {
			continue
		}
		if err := c.client.EndpointDelete(c.ctx, ep.ID); err != nil && !isStatus(err, http.StatusNotFound) {
			errs = append(errs, fmt.Errorf("delete endpoint %d of container %s: %w", ep.ID, ep.ContainerID, err))
			continue
		}
		c.log.Info("Deleted stale endpoint", "endpoint", ep.ID, "stale-container", ep.ContainerID, "stale-ifname", ep.InterfaceName)
	}
	if err := errors.Join(errs...); err != nil {
		return c.fail("GC", err)
	}
	return nil
}
