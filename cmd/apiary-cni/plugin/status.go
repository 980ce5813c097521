package plugin

import (
	"fmt"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/apiary-net/apiary/cells/api/models"
)

// cmdStatus says whether the agent answers: not reachable is code 50
// ("plugin not available") naming the socket; a degraded agent still
// serves ADD, so it is available.
func cmdStatus(args *skel.CmdArgs) error {
	c, err := start("STATUS", args)
	if err != nil {
		return types.NewError(types.ErrDecodingFailure, err.Error(), "")
	}
	defer c.close()
	h, err := c.client.Healthz(c.ctx)
	if err != nil {
		cerr := cniError("STATUS", c.conf.SocketPath, err).(*types.Error)
		cerr.Code = types.ErrPluginNotAvailable
		c.log.Warn("Agent not available", "error", cerr)
		return cerr
	}
	if h.Status != models.HealthzOK {
		c.log.Warn("Agent degraded", "degraded", fmt.Sprint(h.Degraded))
	}
	return nil
}
