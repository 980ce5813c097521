package linux

import (
	"context"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/tunnel"
)

type statusParams struct {
	cell.In

	ID       cell.FullModuleID
	Datapath *Datapath
	Routing  tunnel.Config `optional:"true"`
}

// newStatusProvider adds the Routing line to `apiary status`: "Native"
// or "Tunnel (vxlan): apiary_vxlan ifindex 7, UDP port 8472"; a Failure
// naming what is wrong when the tunnel device is gone or changed behind
// the agent's back (the endpoint programs redirect to its ifindex).
func newStatusProvider(p statusParams) status.ProviderOut {
	return status.NewProviderOut(p.ID, "Routing", func(context.Context) status.Report {
		if !p.Routing.Enabled() {
			return status.Report{State: status.Ok, Message: "Native (pods of other nodes through the node's routes)"}
		}
		if err := p.Datapath.CheckTunnelDevice(p.Routing.Port()); err != nil {
			return status.Report{State: status.Failure, Message: "Tunnel (vxlan): " + err.Error(),
				Details: []string{"pods of other nodes are unreachable until the agent restarts and recreates " + tunnel.DeviceName}}
		}
		return status.Report{State: status.Ok, Message: fmt.Sprintf("Tunnel (vxlan): %s ifindex %d, UDP port %d",
			tunnel.DeviceName, p.Datapath.TunnelIfIndex(), p.Routing.Port())}
	})
}

// CheckTunnelDevice reports what is wrong with the tunnel device the
// datapath made (EnsureTunnelDevice): gone, replaced (another ifindex),
// down, or not a collect-metadata VXLAN device on port.
func (d *Datapath) CheckTunnelDevice(port int) error {
	ifindex := d.TunnelIfIndex()
	if ifindex == 0 {
		return fmt.Errorf("no tunnel device yet")
	}
	return netnsutil.Run(d.host, func() error {
		l, err := netlink.LinkByName(tunnel.DeviceName)
		switch {
		case err != nil:
			return fmt.Errorf("%s is gone (was ifindex %d): %w", tunnel.DeviceName, ifindex, err)
		case l.Attrs().Index != ifindex:
			return fmt.Errorf("%s was replaced: ifindex %d, the endpoint programs redirect to %d", tunnel.DeviceName, l.Attrs().Index, ifindex)
		case !tunnelDeviceMatches(l, port):
			return fmt.Errorf("%s is not a vxlan external device on UDP port %d", tunnel.DeviceName, port)
		case l.Attrs().Flags&net.FlagUp == 0:
			return fmt.Errorf("%s is down", tunnel.DeviceName)
		}
		return nil
	})
}
