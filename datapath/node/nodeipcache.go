package node

import (
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
)

var (
	hostLabels       = identity.ReservedLabels(identity.ReservedHost)
	remoteNodeLabels = identity.ReservedLabels(identity.ReservedRemoteNode)
	healthLabels     = identity.ReservedLabels(identity.ReservedHealth)
	ingressLabels    = identity.ReservedLabels(identity.ReservedIngress)
	worldLabels      = identity.ReservedLabels(identity.ReservedWorld)
)

// resource names a node's metadata in the ipcache.
func resource(n *Node) ipcache.ResourceID { return ipcache.ResourceID("node/" + n.GetKeyName()) }

// ipcacheMetadata returns what the node says about its addresses: the
// host identity for this node's addresses, remote-node for the others'
// (with the node as tunnel peer), health and ingress for those endpoints,
// and, as Cilium's node manager does, another node's pod CIDRs as
// fallback entries: reserved:world (a CIDR identity) with the node as
// tunnel peer, so a packet to one of its pods the ipcache does not know
// yet (its CiliumEndpoint or kvstore entry not seen) is still carried to
// that node in tunnel routing, where its ingress policy is judged.
func (m *NodeManager) ipcacheMetadata(n *Node) map[netip.Prefix]ipcache.Metadata {
	out := map[netip.Prefix]ipcache.Metadata{}
	nodeLabels, peer := remoteNodeLabels, n.TunnelIP()
	if m.isLocal(n) {
		nodeLabels, peer = hostLabels, netip.Addr{}
	}
	add := func(ip netip.Addr, lbls labels.Labels) {
		if !ip.IsValid() {
			return
		}
		p := ipcache.HostPrefix(ip)
		if _, ok := out[p]; ok {
			return // the first role of an address wins: node addresses come first
		}
		out[p] = ipcache.Metadata{Labels: lbls, TunnelPeer: peer, EncryptKey: n.EncryptionKey}
	}
	for _, a := range n.IPAddresses {
		add(a.IP, nodeLabels)
	}
	add(n.IPv4HealthIP, healthLabels)
	add(n.IPv6HealthIP, healthLabels)
	add(n.IPv4IngressIP, ingressLabels)
	add(n.IPv6IngressIP, ingressLabels)
	if !m.isLocal(n) && peer.IsValid() {
		for _, cidr := range n.podCIDRs() {
			if p := cidr.Masked(); p.IsValid() && p.Bits() > 0 {
				if _, ok := out[p]; !ok {
					out[p] = ipcache.Metadata{Labels: worldLabels, TunnelPeer: peer, EncryptKey: n.EncryptionKey}
				}
			}
		}
	}
	return out
}

// podCIDRs returns the node's pod CIDRs, primary first.
func (n *Node) podCIDRs() []netip.Prefix {
	out := make([]netip.Prefix, 0, 2+len(n.IPv4SecondaryAllocCIDRs)+len(n.IPv6SecondaryAllocCIDRs))
	out = append(append(out, n.IPv4AllocCIDR), n.IPv4SecondaryAllocCIDRs...)
	return append(append(out, n.IPv6AllocCIDR), n.IPv6SecondaryAllocCIDRs...)
}

// syncIPCache moves the node's addresses in the ipcache from what old
// said to what updated says (either may be nil), in one revision.
func (m *NodeManager) syncIPCache(old, updated *Node) {
	var updates []ipcache.Update
	var next map[netip.Prefix]ipcache.Metadata
	if updated != nil {
		next = m.ipcacheMetadata(updated)
		for p, md := range next {
			updates = append(updates, ipcache.Update{Prefix: p, Source: updated.Source, Resource: resource(updated), Metadata: md})
		}
	}
	if old != nil {
		for p := range m.ipcacheMetadata(old) {
			if _, kept := next[p]; kept && updated.Source == old.Source {
				continue
			}
			updates = append(updates, ipcache.Update{Prefix: p, Source: old.Source, Resource: resource(old), Remove: true})
		}
	}
	if len(updates) == 0 {
		return
	}
	slices.SortStableFunc(updates, func(a, b ipcache.Update) int { return ipcache.ComparePrefixes(a.Prefix, b.Prefix) })
	if _, err := m.ipc.Apply(updates...); err != nil {
		m.log.Warn("Unable to update the node's addresses in the ipcache", "node", nodeKey(old, updated), "error", err)
	}
}

func nodeKey(old, updated *Node) string {
	if updated != nil {
		return updated.GetKeyName()
	}
	return old.GetKeyName()
}
