package identity

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// LocalNodeIP is this node's IP address, the suffix of the node's
// references to global identities in the kvstore
// (cilium/state/identities/v1/value/<labels>/<node-ip>), as in Cilium.
// The node manager provides it from its configuration; without a
// provider, the identity cell uses the first global unicast address of
// the host (IPv4 before IPv6) and logs which.
type LocalNodeIP struct {
	Addr netip.Addr
}

// HostAddress returns the first global unicast address of the host's
// interfaces, IPv4 before IPv6 (loopback and link-local addresses are not
// global unicast). It is the fallback node IP of the identity cell and of
// the node manager.
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

// nodeSuffix returns the reference suffix and says where it came from.
func nodeSuffix(provided *LocalNodeIP) (suffix, source string, err error) {
	if provided != nil && provided.Addr.IsValid() {
		return provided.Addr.String(), "node manager", nil
	}
	ip, err := HostAddress()
	if err != nil {
		return "", "", fmt.Errorf("find this node's IP for its identity references: %w", err)
	}
	return ip.String(), "first global unicast address of the host", nil
}
