package localnode

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
)

// Config says which node this agent runs on.
type Config struct {
	// NodeName is the node's name (empty: the host name, lower-cased).
	NodeName string
	// NodeIP is the address other nodes reach this one at (empty: the
	// first global unicast address of the host, IPv4 first); on a
	// dual-stack node an IPv4 and an IPv6 address separated by a comma,
	// the first one the node's primary address.
	NodeIP string
	// PodCIDR are the node's pod CIDRs, at most one IPv4 and one IPv6
	// (--ipam=static only).
	PodCIDR []string
	// IPAM says where the node's pod CIDRs come from (Cilium's --ipam):
	// IPAMStatic or IPAMKubernetes.
	IPAM string
}

// The IPAM modes of --ipam.
const (
	// IPAMStatic: the pod CIDRs are --pod-cidr's (none when it is not
	// set), for an agent outside Kubernetes.
	IPAMStatic = "static"
	// IPAMKubernetes: the pod CIDRs are spec.podCIDRs of this node's
	// Kubernetes Node object (kube-controller-manager's
	// --allocate-node-cidrs sets them), as Cilium's --ipam=kubernetes.
	IPAMKubernetes = "kubernetes"
)

// DefaultConfig leaves the name and IP to be found on the host and has no
// pod CIDR.
var DefaultConfig = Config{IPAM: IPAMStatic}

// Flags registers --node-name, --node-ip, --pod-cidr and --ipam.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("ipam", def.IPAM, "Where the node's pod CIDRs come from: static (--pod-cidr) or kubernetes (spec.podCIDRs of the node's Node object; its addresses give the node IP when --node-ip is not set)")
	fs.String("node-name", def.NodeName, "Name of this node (default: the host name)")
	fs.String("node-ip", def.NodeIP, "IP address other nodes reach this node at, or an IPv4 and an IPv6 address separated by a comma for a dual-stack node, e.g. 192.0.2.10,fd00::10 (default: the first global unicast address of the host)")
	fs.StringSlice("pod-cidr", def.PodCIDR, "Pod CIDRs of this node: at most one IPv4 and one IPv6 CIDR, e.g. 10.0.1.0/24,fd00:1::/64")
}

// nodeNamePattern is a DNS subdomain, as Kubernetes node names are.
var nodeNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// Validate checks the flags that are set; errors name the flag.
func (c *Config) Validate() error {
	var errs []error
	if c.NodeName != "" {
		if err := checkNodeName(c.NodeName); err != nil {
			errs = append(errs, fmt.Errorf("--node-name: %w", err))
		}
	}
	if c.NodeIP != "" {
		if _, _, err := parseNodeIPs(c.NodeIP); err != nil {
			errs = append(errs, fmt.Errorf("--node-ip: %w", err))
		}
	}
	if _, _, err := parsePodCIDRs(c.PodCIDR); err != nil {
		errs = append(errs, fmt.Errorf("--pod-cidr: %w", err))
	}
	switch c.IPAM {
	case IPAMStatic:
	case IPAMKubernetes:
		if len(c.PodCIDR) > 0 {
			errs = append(errs, fmt.Errorf("--pod-cidr: cannot be set with --ipam=kubernetes, which takes the pod CIDRs from the Node's spec.podCIDRs (use --ipam=static to give them by hand)"))
		}
	default:
		errs = append(errs, fmt.Errorf("--ipam: %q is not %s or %s (Cilium's cluster-pool, multi-pool and cloud modes are not implemented)", c.IPAM, IPAMStatic, IPAMKubernetes))
	}
	return errors.Join(errs...)
}

func checkNodeName(name string) error {
	if len(name) > 253 || !nodeNamePattern.MatchString(name) {
		return fmt.Errorf("%q must be lower-case alphanumerics, '-' and '.' (a DNS subdomain of at most 253 characters)", name)
	}
	return nil
}

// parseNodeIP reads a unicast address other nodes can reach.
func parseNodeIP(s string) (netip.Addr, error) {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	ip = ip.Unmap()
	switch {
	case ip.Zone() != "":
		return netip.Addr{}, fmt.Errorf("%s: an address with a zone cannot be reached from other nodes", s)
	case ip.IsUnspecified(), ip.IsMulticast(), ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}),
		ip.IsLinkLocalUnicast():
		return netip.Addr{}, fmt.Errorf("%s is not a unicast address other nodes can reach", s)
	}
	return ip, nil
}

// parseNodeIPs reads one node address, or two of different families
// separated by a comma: the primary address first.
func parseNodeIPs(s string) (primary, secondary netip.Addr, err error) {
	first, second, dual := strings.Cut(s, ",")
	if primary, err = parseNodeIP(strings.TrimSpace(first)); err != nil || !dual {
		return primary, secondary, err
	}
	if strings.Contains(second, ",") {
		return primary, secondary, fmt.Errorf("%q: at most two addresses, an IPv4 and an IPv6 one", s)
	}
	if secondary, err = parseNodeIP(strings.TrimSpace(second)); err != nil {
		return primary, secondary, err
	}
	if primary.Is4() == secondary.Is4() {
		return primary, secondary, fmt.Errorf("%q: two addresses must be an IPv4 and an IPv6 one", s)
	}
	return primary, secondary, nil
}

// parsePodCIDRs reads at most one IPv4 and one IPv6 CIDR, without host
// bits.
func parsePodCIDRs(ss []string) (v4, v6 netip.Prefix, err error) {
	for _, s := range ss {
		p, perr := netip.ParsePrefix(s)
		switch {
		case perr != nil:
			return v4, v6, fmt.Errorf("%q is not a CIDR", s)
		case p.Masked() != p:
			return v4, v6, fmt.Errorf("%s has host bits set (did you mean %s?)", s, p.Masked())
		case p.Addr().Is4() && v4.IsValid(), p.Addr().Is6() && v6.IsValid():
			return v4, v6, fmt.Errorf("more than one IPv%d CIDR (%s)", map[bool]int{false: 4, true: 6}[p.Addr().Is6()], s)
		case p.Addr().Is4In6():
			return v4, v6, fmt.Errorf("%s: write IPv4-mapped CIDRs as IPv4", s)
		case p.Addr().Is4():
			v4 = p
		default:
			v6 = p
		}
	}
	return v4, v6, nil
}
