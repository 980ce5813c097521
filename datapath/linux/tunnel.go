package linux

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/tunnel"
)

// EnsureTunnelDevice creates the node's VXLAN device (tunnel.DeviceName)
// in collect-metadata (external) mode on UDP port, as Cilium creates
// cilium_vxlan, or keeps the one there when it already is such a device
// (so a restarted agent keeps the ifindex its endpoint programs redirect
// to); a device of that name that differs is deleted and recreated. It
// turns reverse-path filtering off for it (decapsulated packets come from
// pods the node has no route to through the device), turns ARP off (the
// overlay programs address packets by the ipcache, not by neighbours)
// and brings it up. From then on the node routes (UpsertNodeRoute) go
// through the device. It returns the device's ifindex.
func (d *Datapath) EnsureTunnelDevice(port int) (int, error) {
	var ifindex int
	err := netnsutil.Run(d.host, func() error {
		l, err := netlink.LinkByName(tunnel.DeviceName)
		if err == nil && !tunnelDeviceMatches(l, port) {
			d.log.Info("Recreating the tunnel device: its settings differ", "device", tunnel.DeviceName,
				"type", l.Type(), "port", port)
			if err := netlink.LinkDel(l); err != nil {
				return fmt.Errorf("delete %s: %w", tunnel.DeviceName, err)
			}
			l = nil
		}
		if l == nil {
			if l, err = addTunnelDevice(port); err != nil {
				return err
			}
			d.log.Info("Created the tunnel device", "device", tunnel.DeviceName, "ifindex", l.Attrs().Index, "port", port)
		}
		for _, s := range [][2]string{
			{"net.ipv4.conf." + tunnel.DeviceName + ".rp_filter", "0"},
			{"net.ipv4.conf.all.rp_filter", "0"}, // the stricter of all and the device's applies
		} {
			if err := writeSysctl(s[0], s[1]); err != nil {
				return err
			}
		}
		if err := netlink.LinkSetARPOff(l); err != nil {
			return fmt.Errorf("set %s arp off: %w", tunnel.DeviceName, err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			return fmt.Errorf("set %s up: %w", tunnel.DeviceName, err)
		}
		ifindex = l.Attrs().Index
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("ensure tunnel device: %w", err)
	}
	d.mu.Lock()
	d.tunnelIfIndex = ifindex
	d.mu.Unlock()
	return ifindex, nil
}

// addTunnelDevice adds the VXLAN device and returns it as the kernel
// reports it.
func addTunnelDevice(port int) (netlink.Link, error) {
	v := &netlink.Vxlan{
		LinkAttrs: netlink.LinkAttrs{Name: tunnel.DeviceName, MTU: tunnel.BaseMTU, TxQLen: -1},
		FlowBased: true, Port: port,
	}
	if err := netlink.LinkAdd(v); err != nil {
		return nil, fmt.Errorf("add %s (vxlan external dstport %d): %w", tunnel.DeviceName, port, err)
	}
	l, err := netlink.LinkByName(tunnel.DeviceName)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", tunnel.DeviceName, err)
	}
	return l, nil
}

// tunnelDeviceMatches reports whether l is a collect-metadata VXLAN
// device on port.
func tunnelDeviceMatches(l netlink.Link, port int) bool {
	v, ok := l.(*netlink.Vxlan)
	return ok && v.FlowBased && v.Port == port
}

// RemoveTunnelDevice deletes the VXLAN device (native routing: a device
// left by an agent that ran in tunnel mode goes). No device is not an
// error.
func (d *Datapath) RemoveTunnelDevice() error {
	d.mu.Lock()
	d.tunnelIfIndex = 0
	d.mu.Unlock()
	err := netnsutil.Run(d.host, func() error {
		if _, err := netlink.LinkByName(tunnel.DeviceName); err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				return nil
			}
			return err
		}
		d.log.Info("Removing the tunnel device of an earlier run in tunnel mode", "device", tunnel.DeviceName)
		return deleteLink(tunnel.DeviceName)
	})
	if err != nil {
		return fmt.Errorf("remove tunnel device: %w", err)
	}
	return nil
}

// TunnelIfIndex implements datapath.TunnelDevice: the device's ifindex
// once the cell started in tunnel mode, else 0.
func (d *Datapath) TunnelIfIndex() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tunnelIfIndex
}
