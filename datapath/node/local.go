package node

import (
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/policy/source"
)

// FromLocalNode is the node of the local-node store as the cluster sees
// it: its address as InternalIP, its pod CIDRs, source local.
func FromLocalNode(l localnode.LocalNode) Node {
	return Node{
		Name: l.Name, Cluster: l.Cluster.ClusterName, ClusterID: l.Cluster.ClusterID,
		IPAddresses:   []Address{{Type: NodeInternalIP, IP: l.IP}},
		IPv4AllocCIDR: l.IPv4AllocCIDR, IPv6AllocCIDR: l.IPv6AllocCIDR,
		Source: source.Local,
	}
}
