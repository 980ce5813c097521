package localnode

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
)

// HostAddress returns the first global unicast address of the host's
// interfaces, IPv4 before IPv6 (loopback and link-local addresses are not
// global unicast). It is the node IP when --node-ip is not given.
func HostAddress() (netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("list interface addresses: %w", err)
	}
	var v6 netip.Addr
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok || !ip.Unmap().IsGlobalUnicast() {
			continue
		}
		ip = ip.Unmap()
		if ip.Is4() {
			return ip, nil
		}
		if !v6.IsValid() {
			v6 = ip
		}
	}
	if v6.IsValid() {
		return v6, nil
	}
	return netip.Addr{}, errors.New("no global unicast address on any interface")
}

// nodeName returns --node-name, or the host name lower-cased.
func nodeName(flag string, log *slog.Logger) (string, error) {
	if flag != "" {
		return flag, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("not set, and the host name is unknown: %w", err)
	}
	name := strings.ToLower(host)
	if err := checkNodeName(name); err != nil {
		return "", fmt.Errorf("not set, and the host name cannot be a node name: %w", err)
	}
	log.Info("Using the host name as node name (--node-name)", "node-name", name)
	return name, nil
}

// nodeIPs returns --node-ip (one address, or two of different
// families), or the host's first global unicast address.
func nodeIPs(flag string, log *slog.Logger) (primary, secondary netip.Addr, err error) {
	if flag != "" {
		return parseNodeIPs(flag)
	}
	ip, err := HostAddress()
	if err != nil {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("not set, and %w", err)
	}
	log.Info("Using the first global unicast address of the host as node IP (--node-ip)", "node-ip", ip)
	return ip, netip.Addr{}, nil
}
