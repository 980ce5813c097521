package k8snodes

import (
	"maps"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/policy/source"
)

// Convert returns the node manager's view of a Kubernetes node of
// cluster: its InternalIP and ExternalIP addresses (others are names),
// its first pod CIDR of each family and its labels; source kubernetes.
// Unparsable addresses and CIDRs are left out.
func Convert(k *corev1.Node, cluster cluster.Info) node.Node {
	n := node.Node{
		Name: k.Name, Cluster: cluster.ClusterName, ClusterID: cluster.ClusterID,
		Source: source.Kubernetes, Labels: maps.Clone(k.Labels),
	}
	for _, a := range k.Status.Addresses {
		var t node.AddressType
		switch a.Type {
		case corev1.NodeInternalIP:
			t = node.NodeInternalIP
		case corev1.NodeExternalIP:
			t = node.NodeExternalIP
		default:
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil {
			n.IPAddresses = append(n.IPAddresses, node.Address{Type: t, IP: ip})
		}
	}
	cidrs := k.Spec.PodCIDRs
	if len(cidrs) == 0 && k.Spec.PodCIDR != "" {
		cidrs = []string{k.Spec.PodCIDR}
	}
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			continue
		}
		switch {
		case p.Addr().Is4() && !n.IPv4AllocCIDR.IsValid():
			n.IPv4AllocCIDR = p.Masked()
		case p.Addr().Is6() && !n.IPv6AllocCIDR.IsValid():
			n.IPv6AllocCIDR = p.Masked()
		}
	}
	return n
}
