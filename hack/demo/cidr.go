package main

import (
	"fmt"
	"net/netip"
	"slices"
)

// placePods chooses every node's pod CIDRs and puts each pod on a node.
// The IPv4 addresses decide the nodes: per cluster, the pods with a
// scenario IPv4 address are sorted by it and split between the two nodes
// so that each node's CIDR holds its pods' addresses (none of them the
// network, router or broadcast address the agent's IPAM reserves) and no
// other address of the scenario. Then each node gets an IPv6 CIDR
// holding the IPv6 addresses of its pods. A pod whose address no CIDR can
// hold (10.0.0.1 and fd00::1 are the router address of every CIDR around
// them) is relocated: the lab gives it an address of its node's CIDR and
// the queries naming it use that one. Pods without an address go where
// there is room.
func (p *plan) placePods() error {
	p.relocateReserved()
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
				n.podCIDRs[v4] = cidrs[i]
				continue
			}
			g, err := p.freeCIDR(v4, taken)
			if err != nil {
				return err
			}
			n.podCIDRs[v4] = g
			taken = append(taken, g)
		}
		for _, po := range withIP {
			for _, n := range c.nodes {
				if n.podCIDRs[v4].Contains(po.ips[v4]) {
					po.node = n
					n.pods = append(n.pods, po)
				}
			}
		}
		if err := placeRest(c, rest); err != nil {
			return err
		}
	}
	for _, c := range p.clusters {
		for _, n := range c.nodes {
			g, err := p.nodeCIDR6(n, taken)
			if err != nil {
				return err
			}
			n.podCIDRs[v6] = g
			taken = append(taken, g)
		}
	}
	return nil
}

// nodeCIDR6 returns node n's IPv6 pod CIDR: one holding the scenario
// IPv6 addresses of its pods, relocating them (with a note) when none
// can, or a free one.
func (p *plan) nodeCIDR6(n *node, taken []netip.Prefix) (netip.Prefix, error) {
	var withIP []*pod
	for _, po := range n.pods {
		if a := firstOf(po.scenarioIPs, v6); a.IsValid() && !po.relocated[v6] {
			po.ips[v6] = a
			withIP = append(withIP, po)
		}
	}
	if len(withIP) > 0 {
		slices.SortFunc(withIP, func(a, b *pod) int { return a.ips[v6].Compare(b.ips[v6]) })
		addrs := make([]netip.Addr, len(withIP))
		for i, po := range withIP {
			addrs[i] = po.ips[v6]
		}
		if c, ok := p.cidrFor(addrs, taken, p.scenarioAddrs()); ok {
			return c, nil
		}
		for _, po := range withIP {
			p.notes = append(p.notes, fmt.Sprintf("%s: no pod CIDR holds %s without another address of the scenario; the lab gives the pod another address", po.ref, po.ips[v6]))
			po.ips[v6], po.relocated[v6] = netip.Addr{}, true
		}
	}
	return p.freeCIDR(v6, taken)
}

// relocateReserved relocates the pods whose scenario address of a
// family no pod CIDR can hold, with a note.
func (p *plan) relocateReserved() {
	for _, f := range families {
		for _, po := range p.pods {
			a := firstOf(po.scenarioIPs, f)
			if !a.IsValid() {
				continue
			}
			if _, ok := p.cidrFor([]netip.Addr{a}, nil, nil); !ok {
				p.notes = append(p.notes, fmt.Sprintf("%s: %s is the network, router or broadcast address of every pod CIDR that could hold it; the lab gives the pod another address", po.ref, a))
				po.relocated[f] = true
			}
		}
	}
}

// clusterPods returns the cluster's pods with a usable scenario IPv4
// address (set as their lab address) and the others.
func (p *plan) clusterPods(c *cluster) (withIP, rest []*pod) {
	for _, po := range p.pods {
		if po.cluster != c {
			continue
		}
		a := firstOf(po.scenarioIPs, v4)
		if !a.IsValid() || po.relocated[v4] {
			rest = append(rest, po)
			continue
		}
		po.ips[v4] = a
		withIP = append(withIP, po)
	}
	slices.SortFunc(withIP, func(a, b *pod) int { return a.ips[v4].Compare(b.ips[v4]) })
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
		addrs[i] = po.ips[v4]
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
			if okA && okB && p.splits6(withIP[:k], withIP[k:], others) {
				return []netip.Prefix{a, b}
			}
		}
	}
	if all, ok := p.cidrFor(addrs, taken, others); ok {
		return []netip.Prefix{all}
	}
	for _, po := range withIP {
		p.notes = append(p.notes, fmt.Sprintf("%s: no pod CIDR holds %s without another address of the scenario; the lab gives the pod another address", po.ref, po.ips[v4]))
		po.ips[v4], po.relocated[v4] = netip.Addr{}, true
	}
	return nil
}

// splits6 reports whether the IPv6 scenario addresses of the two groups
// of pods fit two IPv6 CIDRs as their IPv4 ones do.
func (p *plan) splits6(a, b []*pod, others []netip.Addr) bool {
	var taken []netip.Prefix
	for _, group := range [][]*pod{a, b} {
		var addrs []netip.Addr
		for _, po := range group {
			if ip := firstOf(po.scenarioIPs, v6); ip.IsValid() && !po.relocated[v6] {
				addrs = append(addrs, ip)
			}
		}
		if len(addrs) == 0 {
			continue
		}
		slices.SortFunc(addrs, netip.Addr.Compare)
		c, ok := p.cidrFor(addrs, taken, others)
		if !ok {
			return false
		}
		taken = append(taken, c)
	}
	return true
}

// cidrLengths is the order prefix lengths of each family are tried in:
// /24 (/120) first, then smaller networks, then larger ones.
var cidrLengths = [2][]int{
	{24, 25, 26, 27, 28, 29, 30, 23, 22, 21, 20, 19, 18, 17, 16},
	{120, 121, 122, 123, 124, 125, 126, 119, 118, 116, 112, 108, 104},
}

// cidrFor returns a CIDR holding addrs (sorted) where none of them is
// reserved by the IPAM, holding none of others but addrs and no lab
// address, overlapping none of taken.
func (p *plan) cidrFor(addrs []netip.Addr, taken []netip.Prefix, others []netip.Addr) (netip.Prefix, bool) {
	for _, bits := range cidrLengths[famOf(addrs[0])] {
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
	for _, u := range underlays[famOf(c.Addr())] {
		if u.Overlaps(c) {
			return false
		}
	}
	return true
}

// lastAddr returns the last address of c (the IPv4 broadcast address).
func lastAddr(c netip.Prefix) netip.Addr {
	b := c.Masked().Addr().AsSlice()
	for i := c.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// freeCIDR returns a CIDR of family f that overlaps nothing taken and
// holds no scenario address, for a node with no scenario pod of f: a /24
// of 10.200.0.0/13, a /120 of fd5e:1ab:a::/48.
func (p *plan) freeCIDR(f fam, taken []netip.Prefix) (netip.Prefix, error) {
	others := p.scenarioAddrs()
	for i := range 56 * 256 {
		c := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(200 + i/256), byte(i % 256), 0}), 24)
		if f == v6 {
			c = netip.PrefixFrom(netip.AddrFrom16([16]byte{0xfd, 0x5e, 0x01, 0xab, 0, 0x0a, byte(i >> 8), byte(i)}), 120)
		}
		if p.cidrUsable(c, nil, others, taken) {
			return c, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("%s: no free %s pod CIDR for a node", p.file, f)
}

// placeRest puts the pods without a lab address on the node with the
// most free addresses; the agent's IPAM gives them one.
func placeRest(c *cluster, rest []*pod) error {
	for _, po := range rest {
		var best *node
		bestFree := 0
		for _, n := range c.nodes {
			if free := capacity(n.podCIDRs[v4]) - len(n.pods); free > bestFree {
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
