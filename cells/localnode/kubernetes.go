package localnode

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"time"
)

// NodeSource reads this node's Node object from the Kubernetes API
// server (cells/localnode/nodesync provides it). With --ipam=kubernetes
// the Store starts from it: the node IP when --node-ip is not set, and
// the pod CIDRs when the Node has them already.
type NodeSource interface {
	// Node returns the Node named name. An error that is not worth a
	// retry (the Node is refused by RBAC, say) is as good as any other:
	// the Store retries until its deadline.
	Node(ctx context.Context, name string) (KubernetesNode, error)
}

// KubernetesNode is what the Store takes from a Node object.
type KubernetesNode struct {
	// Addresses are the Node's InternalIP addresses, then its ExternalIP
	// ones (Cilium's order), in the order of status.addresses.
	Addresses []netip.Addr
	// PodCIDRs is spec.podCIDRs (spec.podCIDR when that is empty), as
	// written.
	PodCIDRs []string
}

// How long the Store waits for the Node object at start: without
// --node-ip the agent cannot start before it (kubelet registers the
// Node with its addresses before it runs the DaemonSet's pod, so this is
// for a slow API server); with --node-ip one try, for the pod CIDRs of a
// Node that has them (the watcher of cells/localnode/nodesync takes them
// later otherwise).
var (
	nodeWaitTimeout  = time.Minute
	nodeTryTimeout   = 5 * time.Second
	nodeWaitInterval = time.Second
)

// fromKubernetes fills the node's IPs (when --node-ip is not set) and
// pod CIDRs (when the Node has valid ones) from its Node object.
func fromKubernetes(n *LocalNode, cfg Config, src NodeSource, log *slog.Logger) error {
	needIP := cfg.NodeIP == ""
	timeout := nodeTryTimeout
	if needIP {
		timeout = nodeWaitTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	k, err := waitForNode(ctx, n.Name, src, needIP, log)
	if err != nil {
		if needIP {
			return fmt.Errorf("--node-ip: not set, and the addresses of Node %s could not be read from the API server within %s: %w", n.Name, timeout, err)
		}
		log.Info("Node object not read at start; its spec.podCIDRs are waited for in the background", "node", n.Name, "error", err)
		return nil
	}
	if needIP {
		n.IP, n.SecondaryIP = k.nodeIPs()
		log.Info("Using the Node's address as node IP (--node-ip)", "node", n.Name, "node-ip", n.IP, "secondary-ip", n.SecondaryIP)
	}
	if v4, v6, err := parsePodCIDRs(k.PodCIDRs); err == nil {
		n.IPv4AllocCIDR, n.IPv6AllocCIDR = v4, v6
	}
	return nil
}

// waitForNode gets the Node; when needIP, until it exists with an
// address or ctx ends.
func waitForNode(ctx context.Context, name string, src NodeSource, needIP bool, log *slog.Logger) (KubernetesNode, error) {
	logged := false
	for {
		k, err := src.Node(ctx, name)
		if err == nil && needIP && len(k.Addresses) == 0 {
			err = fmt.Errorf("node %s has no InternalIP or ExternalIP in status.addresses", name)
		}
		if err == nil {
			return k, nil
		}
		if !needIP {
			return k, err
		}
		if !logged {
			log.Info("Waiting for the Node object", "node", name, "reason", err)
			logged = true
		}
		select {
		case <-ctx.Done():
			return k, err
		case <-time.After(nodeWaitInterval):
		}
	}
}

// nodeIPs picks the primary address (the first one, an InternalIP when
// there is one) and the first address of the other family.
func (k KubernetesNode) nodeIPs() (primary, secondary netip.Addr) {
	for _, a := range k.Addresses {
		switch {
		case !primary.IsValid():
			primary = a
		case a.Is4() != primary.Is4():
			return primary, a
		}
	}
	return primary, secondary
}

// ParsePodCIDRs reads a node's pod CIDRs (--pod-cidr, or a Node's
// spec.podCIDRs): at most one IPv4 and one IPv6 CIDR, without host bits.
func ParsePodCIDRs(cidrs []string) (v4, v6 netip.Prefix, err error) {
	return parsePodCIDRs(cidrs)
}
