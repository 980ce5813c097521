package node

import (
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"strings"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/source"
)

// LocalNode is this agent's node as the flags describe it.
type LocalNode struct {
	Node
}

// newLocalNode builds the local node from the flags, finding the name
// and IP on the host when they are not given: this reads the host name
// and the interface addresses, so that a host without either stops the
// agent at once with the flag to set.
func newLocalNode(cfg Config, cluster identity.ClusterConfig, log *slog.Logger) (LocalNode, error) {
	name, err := nodeName(cfg.NodeName, log)
	if err != nil {
		return LocalNode{}, fmt.Errorf("invalid configuration: --node-name: %w", err)
	}
	ip, err := nodeIP(cfg.NodeIP, log)
	if err != nil {
		return LocalNode{}, fmt.Errorf("invalid configuration: --node-ip: %w", err)
	}
	v4, v6, _ := parsePodCIDRs(cfg.PodCIDR) // checked by Config.Validate
	return LocalNode{Node{
		Name: name, Cluster: cluster.ClusterName, ClusterID: cluster.ClusterID,
		IPAddresses:   []Address{{Type: NodeInternalIP, IP: ip}},
		IPv4AllocCIDR: v4, IPv6AllocCIDR: v6,
		Source: source.Local,
	}}, nil
}

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

func nodeIP(flag string, log *slog.Logger) (netip.Addr, error) {
	if flag != "" {
		return parseNodeIP(flag)
	}
	ip, err := identity.HostAddress()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("not set, and %w", err)
	}
	log.Info("Using the first global unicast address of the host as node IP (--node-ip)", "node-ip", ip)
	return ip, nil
}

// ipcacheLocalNode is what the ipcache needs of the local node.
func ipcacheLocalNode(n LocalNode) ipcache.LocalNode {
	return ipcache.LocalNode{Name: n.Name, IP: n.TunnelIP()}
}

// identityLocalNodeIP is the suffix of this node's identity references.
func identityLocalNodeIP(n LocalNode) identity.LocalNodeIP {
	return identity.LocalNodeIP{Addr: n.TunnelIP()}
}
