package loadercell

import (
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
)

// nodePortAddrs follows the addresses of the NodePort devices (devices,
// in --datapath-netns) and chooses those NodePort frontends are served
// on, as Cilium does:
// with --nodeport-addresses every address of a device within those
// CIDRs, else each device's primary IPv4 and IPv6 address (the first
// one of the family that is not a secondary, deprecated or tentative
// one); link-local and loopback addresses never.
type nodePortAddrs struct {
	log     *slog.Logger
	devices *devices
	cidrs   []netip.Prefix
	netns   string

	// readMu makes each read whole (list, choose, tell): the start's
	// and the follower's reads never apply an older list last.
	readMu  sync.Mutex
	mu      sync.Mutex
	devs    []netip.Addr // the devices' chosen addresses, sorted
	lastErr error        // of the last read, for the status line
	subs    map[int]func()
	nextSub int
}

var _ datapath.NodePortAddrs = (*nodePortAddrs)(nil)

type nodePortAddrsParams struct {
	cell.In

	Config  Config
	Linux   linux.Config `optional:"true"`
	Devices *devices
	Log     *slog.Logger
}

// newNodePortAddrs returns the NodePort addresses; with
// --enable-node-port it reads the devices' addresses after every reading
// of the devices (the start's, then the follower's).
func newNodePortAddrs(p nodePortAddrsParams) (datapath.NodePortAddrs, *nodePortAddrs, error) {
	p.Config = p.Config.effective()
	cidrs, err := p.Config.nodePortCIDRs()
	if err != nil {
		return nil, nil, &cell.ConfigError{Err: err}
	}
	n := &nodePortAddrs{log: p.Log, devices: p.Devices, cidrs: cidrs, netns: p.Linux.DatapathNetNS, subs: map[int]func(){}}
	if !p.Config.EnableNodePort {
		return n, n, nil
	}
	// The devices' follower reads again after every change of devices,
	// addresses and routes, the start's reading first (before the
	// service manager's first use): the addresses are read after each.
	p.Devices.afterRead(func() {
		if err := n.read(); err != nil {
			n.log.Warn("Unable to read the addresses of the NodePort devices", "error", err)
		}
	})
	return n, n, nil
}

// nodePortCIDRs parses --nodeport-addresses.
func (c *Config) nodePortCIDRs() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, s := range c.NodePortAddresses {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("--nodeport-addresses[%d]: %q is not a CIDR (such as 192.0.2.0/24)", i, s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Addrs implements datapath.NodePortAddrs.
func (n *nodePortAddrs) Addrs(node []netip.Addr) []netip.Addr {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []netip.Addr
	for _, a := range node {
		if a = a.Unmap(); n.within(a) {
			out = append(out, a)
		}
	}
	out = append(out, n.devs...)
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}

// within reports whether a is in --nodeport-addresses (any address when
// it is not set).
func (n *nodePortAddrs) within(a netip.Addr) bool {
	return len(n.cidrs) == 0 || slices.ContainsFunc(n.cidrs, func(p netip.Prefix) bool { return p.Contains(a) })
}

// Subscribe implements datapath.NodePortAddrs.
func (n *nodePortAddrs) Subscribe(fn func()) func() {
	n.mu.Lock()
	defer n.mu.Unlock()
	id := n.nextSub
	n.nextSub++
	n.subs[id] = fn
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.subs, id)
	}
}

// devicesStatus is the status line's part: the devices' chosen
// addresses, or why they could not be read.
func (n *nodePortAddrs) devicesStatus() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lastErr != nil {
		return "addresses unknown: " + n.lastErr.Error()
	}
	s := make([]string, len(n.devs))
	for i, a := range n.devs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// read lists the devices' addresses, chooses, and tells the subscribers
// when the choice changed.
func (n *nodePortAddrs) read() error {
	n.readMu.Lock()
	defer n.readMu.Unlock()
	devs, err := n.list()
	n.mu.Lock()
	n.lastErr = err
	changed := err == nil && !slices.Equal(devs, n.devs)
	if changed {
		n.devs = devs
	}
	subs := make([]func(), 0, len(n.subs))
	for _, fn := range n.subs {
		subs = append(subs, fn)
	}
	n.mu.Unlock()
	if !changed {
		return err
	}
	n.log.Info("NodePort addresses of the devices", "addresses", devs)
	for _, fn := range subs {
		fn()
	}
	return nil
}

// list returns the devices' chosen addresses, sorted.
func (n *nodePortAddrs) list() ([]netip.Addr, error) {
	h, err := handleAt(n.netns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	var out []netip.Addr
	for _, name := range n.devices.names() {
		lk, err := h.LinkByName(name)
		if _, gone := err.(netlink.LinkNotFoundError); gone {
			continue // chosen, and gone since: the next reading drops it
		}
		if err != nil {
			return nil, fmt.Errorf("device %s: %w", name, err)
		}
		addrs, err := h.AddrList(lk, netlink.FAMILY_ALL)
		if err != nil {
			return nil, fmt.Errorf("device %s: addresses: %w", name, err)
		}
		out = append(out, chooseAddrs(addrs, n.cidrs)...)
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out), nil
}

// chooseAddrs returns the NodePort addresses among one device's: every
// usable one within cidrs, or without cidrs the first usable one of
// each family that is not a secondary address.
func chooseAddrs(addrs []netlink.Addr, cidrs []netip.Prefix) []netip.Addr {
	var out []netip.Addr
	var have4, have6 bool
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || a.IPNet == nil {
			continue
		}
		ip = ip.Unmap()
		const unusable = unix.IFA_F_TENTATIVE | unix.IFA_F_DADFAILED | unix.IFA_F_DEPRECATED
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() || a.Flags&unusable != 0 {
			continue
		}
		if len(cidrs) > 0 {
			if slices.ContainsFunc(cidrs, func(p netip.Prefix) bool { return p.Contains(ip) }) {
				out = append(out, ip)
			}
			continue
		}
		if a.Flags&unix.IFA_F_SECONDARY != 0 {
			continue
		}
		if ip.Is4() && !have4 {
			out, have4 = append(out, ip), true
		} else if ip.Is6() && !have6 {
			out, have6 = append(out, ip), true
		}
	}
	return out
}
