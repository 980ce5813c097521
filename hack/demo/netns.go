package main

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// labPrefix names every network namespace of the lab.
const labPrefix = "apiary-lab"

// netnsDir is where named network namespaces live (ip netns).
const netnsDir = "/var/run/netns"

// nsPath returns the path of the named namespace.
func nsPath(name string) string { return filepath.Join(netnsDir, name) }

// handleAt returns a netlink handle working in the namespace at path.
func handleAt(path string) (*netlink.Handle, error) {
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return nil, fmt.Errorf("open network namespace %s: %w", path, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink handle in %s: %w", path, err)
	}
	return h, nil
}

// labNetNS lists the lab's namespaces left on the machine.
func labNetNS() []string {
	entries, _ := os.ReadDir(netnsDir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), labPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// nlAddr returns the address and prefix length p as a netlink address;
// an IPv6 one skips duplicate address detection, so that it is usable
// at once.
func nlAddr(p netip.Prefix) *netlink.Addr {
	a := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
	if p.Addr().Is6() {
		a.Flags = unix.IFA_F_NODAD
	}
	return a
}

// ipnet returns p as a *net.IPNet.
func ipnet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// underlayLink plugs the namespace at hostPath into the lab bridge with a
// veth (labName on the bridge side, eth0 inside) and gives eth0 addrs.
func underlayLink(lab *netlink.Handle, labName, hostPath string, addrs ...netip.Prefix) (*netlink.Handle, error) {
	ns, err := netns.GetFromPath(hostPath)
	if err != nil {
		return nil, fmt.Errorf("open network namespace %s: %w", hostPath, err)
	}
	defer ns.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: labName}, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(ns))}
	if err := lab.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("add veth %s to %s: %w", labName, hostPath, err)
	}
	br, err := lab.LinkByName("br0")
	if err != nil {
		return nil, fmt.Errorf("find the lab bridge: %w", err)
	}
	l, err := lab.LinkByName(labName)
	if err == nil {
		err = lab.LinkSetMaster(l, br)
	}
	if err == nil {
		err = lab.LinkSetUp(l)
	}
	if err != nil {
		return nil, fmt.Errorf("plug %s into the lab bridge: %w", labName, err)
	}
	h, err := handleAt(hostPath)
	if err != nil {
		return nil, err
	}
	eth, err := h.LinkByName("eth0")
	for _, a := range addrs {
		if err == nil {
			err = h.AddrAdd(eth, nlAddr(a))
		}
	}
	if err == nil {
		err = h.LinkSetUp(eth)
	}
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("set up eth0 in %s: %w", hostPath, err)
	}
	return h, nil
}
