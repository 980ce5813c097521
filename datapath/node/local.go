package node

import (
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/policy/source"
)

// FromLocalNode is the node of the local-node store as the cluster sees
// it: its addresses (one per family) as InternalIP, its pod CIDRs, source local.
func FromLocalNode(l localnode.LocalNode) Node {
	addrs := []Address{{Type: NodeInternalIP, IP: l.IP}}
	if l.SecondaryIP.IsValid() {
		addrs = append(addrs, Address{Type: NodeInternalIP, IP: l.SecondaryIP})
	}
	return Node{
		Name: l.Name, Cluster: l.Cluster.ClusterName, ClusterID: l.Cluster.ClusterID,
		IPAddresses:   addrs,
		IPv4AllocCIDR: l.IPv4AllocCIDR, IPv6AllocCIDR: l.IPv6AllocCIDR,
		Source: source.Local,
	}
}
