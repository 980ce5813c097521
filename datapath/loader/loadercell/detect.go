package loadercell

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// excludedPrefixes are the names detection never takes (Cilium's
// list): the loopback, the endpoints' host sides (lxc), the tunnel
// device (cilium_vxlan), other CNIs' and Docker's bridges.
var excludedPrefixes = []string{"cilium_", "lo", "lxc", "cni", "docker"}

// notMatching is why a device --devices does not match is not chosen.
const notMatching = "not matching --devices"

// linkInfo is what detection reads of one device of the namespace.
type linkInfo struct {
	index  int
	name   string
	kind   string // netlink's type: "device", "veth", "bridge", "dummy", "vrf", ...
	flags  uint32 // IFF_*
	master int    // the bridge, bond or VRF it is enslaved to (ifindex), or 0
	// ether: an Ethernet address (the NodePort programs read an
	// Ethernet header).
	ether bool
	addrs int // addresses of any family
	// globalRoute: a route of any table through it to a global unicast
	// destination (its own address's local route counts);
	// defaultRoute: a main-table default route through it.
	globalRoute, defaultRoute bool
}

// netDevice is a chosen device.
type netDevice struct {
	name  string
	index int
}

// chooseDevices returns the devices of links the NodePort programs go
// on, sorted by name, and why each other device is not one, by Cilium's
// rules. A device --devices (f) names or matches by prefix is taken
// when it is up and has an address, whatever else it is; one an
// exclusion ("!") matches first never. A device f does not match is
// left out when f has a name or prefix, unless enforce
// (--enforce-device-detection); otherwise (no --devices, exclusions
// only, or enforce) detection decides: a device is taken when it is up,
// has an address and a route to a global unicast destination, is not a
// loopback, bridge, Open vSwitch or IPoIB device, not a port of a bridge
// or bond (a VRF's is), is not named as the devices of apiary, other
// CNIs and Docker are (excludedPrefixes), and, for a veth, carries a
// default route unless f names or matches devices (kind clusters'
// nodes: other veths are pods' of an earlier CNI). apiary also wants an
// Ethernet address: its programs read an Ethernet header.
func chooseDevices(links []linkInfo, f deviceFilter, enforce bool) ([]netDevice, map[string]string) {
	kind := map[int]string{}
	for _, l := range links {
		kind[l.index] = l.kind
	}
	var out []netDevice
	why := map[string]string{}
	for _, l := range links {
		matched, excluded := f.match(l.name)
		reason := ""
		switch {
		case excluded:
			reason = "left out by --devices"
		case matched && l.flags&unix.IFF_UP == 0:
			reason = "down"
		case matched && l.addrs == 0:
			reason = "no address"
		case matched:
		case f.positive() && !enforce:
			reason = notMatching
		default:
			reason = unsuitable(l, kind[l.master], f.positive())
		}
		if reason != "" {
			why[l.name] = reason
			continue
		}
		out = append(out, netDevice{l.name, l.index})
	}
	slices.SortFunc(out, func(a, b netDevice) int { return strings.Compare(a.name, b.name) })
	return out, why
}

// unsuitable says why detection does not take l (masterKind: the type
// of the device l is enslaved to), or "".
func unsuitable(l linkInfo, masterKind string, filtered bool) string {
	for _, p := range excludedPrefixes {
		if strings.HasPrefix(l.name, p) {
			return fmt.Sprintf("named %s*", p)
		}
	}
	switch {
	case l.flags&unix.IFF_UP == 0:
		return "down"
	case l.flags&unix.IFF_LOOPBACK != 0:
		return "a loopback device"
	case l.flags&unix.IFF_SLAVE != 0 || l.master != 0 && masterKind != "vrf":
		return "a port of a bridge or bond"
	case l.addrs == 0:
		return "no address"
	case l.kind == "bridge" || l.kind == "openvswitch":
		return "a bridge (name it in --devices to use it)"
	case l.kind == "ipoib":
		return "an IPoIB device (name it in --devices to use it)"
	case l.kind == "veth" && !filtered && !l.defaultRoute:
		return "a veth without a default route"
	case !l.ether:
		return "no Ethernet address"
	case !l.globalRoute:
		return "no route to a global unicast address"
	}
	return ""
}

// dumpTries is how many times readLinks reads the namespace when a
// change interrupts its dumps.
const dumpTries = 5

// readLinks reads the devices of the namespace h is in, their addresses
// and routes. A dump a change interrupted (netlink's ErrDumpInterrupted,
// common while pods come and go) is read again: what it returned may
// lack a device.
func readLinks(h *netlink.Handle) (links []linkInfo, err error) {
	for range dumpTries {
		if links, err = readLinksOnce(h); !errors.Is(err, netlink.ErrDumpInterrupted) {
			return links, err
		}
	}
	return nil, err
}

// readLinksOnce is one reading of readLinks.
func readLinksOnce(h *netlink.Handle) ([]linkInfo, error) {
	lks, err := h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	addrs, err := h.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	byIndex := map[int]*linkInfo{}
	out := make([]linkInfo, len(lks))
	for i, lk := range lks {
		a := lk.Attrs()
		out[i] = linkInfo{index: a.Index, name: a.Name, kind: lk.Type(), flags: a.RawFlags, master: a.MasterIndex,
			ether: len(a.HardwareAddr) == 6 && !isZero(a.HardwareAddr)}
		byIndex[a.Index] = &out[i]
	}
	for _, a := range addrs {
		if l := byIndex[a.LinkIndex]; l != nil {
			l.addrs++
		}
	}
	for _, r := range routes {
		l := byIndex[r.LinkIndex]
		if l == nil {
			continue
		}
		if isDefault(r.Dst) {
			l.defaultRoute = l.defaultRoute || r.Table == unix.RT_TABLE_MAIN
			continue
		}
		if ip, ok := netip.AddrFromSlice(r.Dst.IP); ok && ip.Unmap().IsGlobalUnicast() {
			l.globalRoute = true
		}
	}
	return out, nil
}

// isDefault reports whether dst is a default route's destination: none,
// 0.0.0.0/0 or ::/0.
func isDefault(dst *net.IPNet) bool {
	if dst == nil {
		return true
	}
	ones, _ := dst.Mask.Size()
	return ones == 0 && dst.IP.IsUnspecified()
}

func isZero(mac net.HardwareAddr) bool {
	return !slices.ContainsFunc(mac, func(b byte) bool { return b != 0 })
}
