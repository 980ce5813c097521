package main

import (
	"fmt"
	"net/netip"
	"slices"
)

// placePods chooses every node's pod CIDR and puts each pod on a node:
// per cluster, the pods with a scenario address are sorted by it and
// split between the two nodes so that each node's CIDR holds its pods'
// addresses (none of them the network, router or broadcast address the
// agent's IPAM reserves) and no other address of the scenario. A pod
// whose address no CIDR can hold (10.0.0.1 is the router address of
// every CIDR around it) is relocated: the lab gives it an address of its
// node's CIDR and the queries naming it use that one. Pods without an
// address go where there is room.
func (p *plan) placePods() error {
	var taken []netip.Prefix
	for _, c := range p.clusters {
		withIP, rest := p.clusterPods(c)
		cidrs := p.splitCIDRs(withIP, taken)
		if cidrs == nil {
			rest, withIP = append(rest, withIP...), nil
		}
		taken = append(taken, cidrs...)
		for i, n := range c.nodes {
			if i < len(cidrs) {
				n.podCIDR = cidrs[i]
				continue
			}
			g, err := p.freeCIDR(taken)
			if err != nil {
				return err
			}
			n.podCIDR = g
			taken = append(taken, g)
		}
		for _, po := range withIP {
			for _, n := range c.nodes {
				if n.podCIDR.Contains(po.ip) {
					po.node = n
					n.pods = append(n.pods, po)
				}
			}
		}
		if err := placeRest(c, rest); err != nil {
			return err
		}
	}
	return nil
}

// clusterPods returns the cluster's pods with a usable scenario IPv4
// address (set as their lab address) and the others.
func (p *plan) clusterPods(c *cluster) (withIP, rest []*pod) {
	for _, po := range p.pods {
		if po.cluster != c {
			continue
		}
		a := firstIPv4(po.scenarioIPs)
		if !a.IsValid() {
			rest = append(rest, po)
			continue
		}
		if _, ok := p.cidrFor([]netip.Addr{a}, nil, nil); !ok {
			p.notes = append(p.notes, fmt.Sprintf("%s: %s is the network, router or broadcast address of every pod CIDR that could hold it; the lab gives the pod another address", po.ref, a))
			po.relocated = true
			rest = append(rest, po)
			continue
		}
		po.ip = a
		withIP = append(withIP, po)
	}
	slices.SortFunc(withIP, func(a, b *pod) int { return a.ip.Compare(b.ip) })
	return withIP, rest
}

// splitCIDRs returns one CIDR per node for the sorted pods, trying the
// most even split first, then one CIDR for all of them (on the first
// node). When neither fits, the pods lose their scenario address, with a
// note, and it returns nil: the caller relocates them all.
func (p *plan) splitCIDRs(withIP []*pod, taken []netip.Prefix) []netip.Prefix {
	if len(withIP) == 0 {
		return nil
	}
	others := p.scenarioAddrs()
	addrs := make([]netip.Addr, len(withIP))
	for i, po := range withIP {
		addrs[i] = po.ip
	}
	n := len(addrs)
	for d := 0; d < n; d++ {
		ks := []int{n/2 - d}
		if d > 0 {
			ks = append(ks, n/2+d)
		}
		for _, k := range ks {
			if k < 1 || k >= n {
				continue
			}
			a, okA := p.cidrFor(addrs[:k], taken, others)
			b, okB := p.cidrFor(addrs[k:], append(slices.Clone(taken), a), others)
			if okA && okB {
				return []netip.Prefix{a, b}
			}
		}
	}
	if all, ok := p.cidrFor(addrs, taken, others); ok {
		return []netip.Prefix{all}
	}
	for _, po := range withIP {
		p.notes = append(p.notes, fmt.Sprintf("%s: no pod CIDR holds %s without another address of the scenario; the lab gives the pod another address", po.ref, po.ip))
		po.ip, po.relocated = netip.Addr{}, true
	}
	return nil
}

// cidrLengths is the order prefix lengths are tried in: /24 first, then
// smaller networks, then larger ones.
var cidrLengths = []int{24, 25, 26, 27, 28, 29, 30, 23, 22, 21, 20, 19, 18, 17, 16}

// cidrFor returns a CIDR holding addrs (sorted) where none of them is
// reserved by the IPAM, holding none of others but addrs and no lab
// address, overlapping none of taken.
func (p *plan) cidrFor(addrs []netip.Addr, taken []netip.Prefix, others []netip.Addr) (netip.Prefix, bool) {
	for _, bits := range cidrLengths {
		c := netip.PrefixFrom(addrs[0], bits).Masked()
		if !c.Contains(addrs[len(addrs)-1]) || !p.cidrUsable(c, addrs, others, taken) {
			continue
		}
		return c, true
	}
	return netip.Prefix{}, false
}

// cidrUsable reports whether c can be a node's pod CIDR for addrs.
func (p *plan) cidrUsable(c netip.Prefix, addrs, others []netip.Addr, taken []netip.Prefix) bool {
	network, router, broadcast := c.Addr(), c.Addr().Next(), lastAddr(c)
	for _, a := range addrs {
		if a == network || a == router || a == broadcast {
			return false
		}
	}
	for _, o := range others {
		if c.Contains(o) && !slices.Contains(addrs, o) {
			return false
		}
	}
	for _, t := range taken {
		if t.Overlaps(c) {
			return false
		}
	}
	for _, u := range underlays {
		if u.Overlaps(c) {
			return false
		}
	}
	return true
}

// lastAddr returns the last address of c (the IPv4 broadcast address).
func lastAddr(c netip.Prefix) netip.Addr {
	b := c.Masked().Addr().As4()
	host := uint32(1)<<(32-c.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// freeCIDR returns a /24 of 10.200.0.0/16 and up that overlaps nothing
// taken and holds no scenario address, for a node with no scenario pod.
func (p *plan) freeCIDR(taken []netip.Prefix) (netip.Prefix, error) {
	others := p.scenarioAddrs()
	for second := 200; second < 256; second++ {
		for third := 0; third < 256; third++ {
			c := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(second), byte(third), 0}), 24)
			if p.cidrUsable(c, nil, others, taken) {
				return c, nil
			}
		}
	}
	return netip.Prefix{}, fmt.Errorf("%s: no free /24 in 10.200.0.0/13 for a pod CIDR", p.file)
}

// placeRest puts the pods without a lab address on the node with the
// most free addresses; the agent's IPAM gives them one.
func placeRest(c *cluster, rest []*pod) error {
	for _, po := range rest {
		var best *node
		bestFree := 0
		for _, n := range c.nodes {
			if free := capacity(n.podCIDR) - len(n.pods); free > bestFree {
				best, bestFree = n, free
			}
		}
		if best == nil {
			return fmt.Errorf("%s: no node of cluster %s has a free address", po.ref, c.name)
		}
		po.node = best
		best.pods = append(best.pods, po)
	}
	return nil
}

// capacity is the number of addresses the IPAM hands out in c.
func capacity(c netip.Prefix) int {
	return 1<<(32-c.Bits()) - 3
}
