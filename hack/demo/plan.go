package main

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/policy/simulate"
)

// nodesPerCluster is the number of nodes (agents) of each cluster.
const nodesPerCluster = 2

// plan is the lab a scenario asks for: clusters, nodes, pods, the outside
// host and the queries, with every address chosen. It is computed before
// anything is created.
type plan struct {
	file     string
	scenario *simulate.Scenario
	sim      *simulate.Simulation
	// underlay is the lab bridge's network of each family.
	underlay [2]netip.Prefix
	// labIP is the lab namespace's address on the underlay bridge, of
	// each family.
	labIP     [2]netip.Addr
	outsideIP [2]netip.Addr
	clusters  []*cluster
	pods      []*pod
	// outside are the query addresses that are no endpoint, served by
	// the outside host, with the ports queried on each.
	outside map[netip.Addr]*ports
	queries []*query
	// notes say where the lab departs from the file (a relocated
	// address).
	notes []string
}

// cluster is one cluster of the lab: its etcd and its nodes.
type cluster struct {
	name   string
	id     int
	etcdIP netip.Addr
	nodes  []*node
}

// node is one agent in its own network namespace.
type node struct {
	cluster *cluster
	name    string
	// ips and podCIDRs are the node's address and pod CIDR of each
	// family: every node is dual-stack.
	ips      [2]netip.Addr
	podCIDRs [2]netip.Prefix
	pods     []*pod
}

// fam is an address family, the index of the per-family arrays.
type fam int

const (
	v4 fam = iota
	v6
)

// families are both families, IPv4 first.
var families = []fam{v4, v6}

// famOf returns the family of a.
func famOf(a netip.Addr) fam {
	if a.Unmap().Is4() {
		return v4
	}
	return v6
}

func (f fam) String() string {
	if f == v6 {
		return "IPv6"
	}
	return "IPv4"
}

// bits is the address length of the family.
func (f fam) bits() int {
	if f == v6 {
		return 128
	}
	return 32
}

// pod is one scenario endpoint.
type pod struct {
	index   int
	ref     string
	spec    simulate.Endpoint
	cluster *cluster
	node    *node
	// ips are the addresses the lab gives the pod, of each family: the
	// scenario's, or invalid until the agent's IPAM hands one out.
	ips [2]netip.Addr
	// scenarioIPs are the file's addresses of the endpoint, which
	// queries may name.
	scenarioIPs []netip.Addr
	// relocated: the lab could not give the pod its scenario address
	// of the family.
	relocated [2]bool
	id        uint16
	served    ports
}

// ports are the TCP and UDP ports a server answers, and whether it
// records the ICMP and ICMPv6 messages it receives.
type ports struct {
	tcp, udp []int
	icmp     bool
}

func (p *ports) add(proto string, port int) {
	if isICMP(proto) {
		p.icmp = true
		return
	}
	list := &p.tcp
	if proto == "UDP" {
		list = &p.udp
	}
	if !slices.Contains(*list, port) {
		*list = append(*list, port)
	}
}

// side is one end of a query: a pod or an outside address.
type side struct {
	pod  *pod
	addr netip.Addr
}

// query is one scenario query and simulate's verdict of it.
type query struct {
	result   simulate.Result
	model    simulate.QueryModel
	from, to side
	// fam is the family of the query's packets.
	fam fam
}

// isICMP reports whether proto is ICMP or ICMPv6 (whose "port" is the
// message type).
func isICMP(proto string) bool { return proto == "ICMP" || proto == "ICMPv6" }

// newPlan loads the scenario with policy/simulate (its errors are
// simulate's) and lays the lab out.
func newPlan(file string, data []byte) (*plan, error) {
	scenario, err := simulate.ParseScenario(file, data)
	if err != nil {
		return nil, err
	}
	sim, err := simulate.New(file, scenario)
	if err != nil {
		return nil, err
	}
	p := &plan{file: file, scenario: scenario, sim: sim, outside: map[netip.Addr]*ports{}}
	model := sim.Model()
	if err := p.layOut(model); err != nil {
		return nil, err
	}
	return p, nil
}

// layOut creates the clusters, nodes and pods, chooses the addresses and
// resolves the queries.
func (p *plan) layOut(model *simulate.Model) error {
	p.addClusters()
	byModel := map[*simulate.EndpointModel]*pod{}
	for i, ep := range p.scenario.Endpoints {
		po := &pod{index: i, ref: model.Endpoints[i].Ref, spec: ep, cluster: p.cluster(ep.Cluster)}
		for _, s := range ep.IPs {
			if a, err := netip.ParseAddr(s); err == nil {
				po.scenarioIPs = append(po.scenarioIPs, a.Unmap())
			}
		}
		p.pods = append(p.pods, po)
		byModel[model.Endpoints[i]] = po
	}
	results := p.sim.Run()
	var errs []error
	for i, qm := range model.Queries {
		q, err := p.resolveQuery(i, qm, results[i], byModel)
		errs = append(errs, err)
		p.queries = append(p.queries, q)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := p.chooseUnderlay(); err != nil {
		return err
	}
	return p.placePods()
}

// addClusters makes the scenario's cluster (id 1) and every other
// cluster its endpoints name, in file order.
func (p *plan) addClusters() {
	names := []string{p.scenario.Cluster}
	for _, ep := range p.scenario.Endpoints {
		if ep.Cluster != "" && !slices.Contains(names, ep.Cluster) {
			names = append(names, ep.Cluster)
		}
	}
	for i, name := range names {
		c := &cluster{name: name, id: i + 1}
		for n := 1; n <= nodesPerCluster; n++ {
			c.nodes = append(c.nodes, &node{cluster: c, name: fmt.Sprintf("%s-node%d", name, n)})
		}
		p.clusters = append(p.clusters, c)
	}
}

// cluster returns the cluster named name ("" is the scenario's).
func (p *plan) cluster(name string) *cluster {
	if name == "" {
		name = p.scenario.Cluster
	}
	for _, c := range p.clusters {
		if c.name == name {
			return c
		}
	}
	return nil
}

// resolveQuery turns query i into its two sides and the family of its
// packets; the lab runs TCP, UDP, ICMP and ICMPv6 queries.
func (p *plan) resolveQuery(i int, qm simulate.QueryModel, r simulate.Result, byModel map[*simulate.EndpointModel]*pod) (*query, error) {
	q := &query{result: r, model: qm, fam: queryFam(qm)}
	entry := fmt.Sprintf("%s: queries[%d] (%s -> %s)", p.file, i, qm.Query.From, qm.Query.To)
	switch qm.Protocol {
	case "TCP", "UDP", "ICMP", "ICMPv6":
	default:
		return q, fmt.Errorf("%s: protocol %s: the lab runs TCP, UDP, ICMP and ICMPv6 queries only", entry, qm.Protocol)
	}
	var errs []error
	for _, s := range []struct {
		model *simulate.SideModel
		out   *side
	}{{&qm.From, &q.from}, {&qm.To, &q.to}} {
		ip := s.model.IP.Unmap()
		if s.model.Endpoint != nil {
			s.out.pod = byModel[s.model.Endpoint]
			if ip.IsValid() && ip != firstOf(s.out.pod.scenarioIPs, famOf(ip)) {
				errs = append(errs, fmt.Errorf("%s: %s: the lab gives each pod one address of each family, the first of its ips", entry, ip))
			}
			continue
		}
		if famOf(ip) != q.fam {
			errs = append(errs, fmt.Errorf("%s: %s is an %s address of no endpoint, the query's packets are %s: the lab cannot send them", entry, ip, famOf(ip), q.fam))
			continue
		}
		s.out.addr = ip
		if p.outside[ip] == nil {
			p.outside[ip] = &ports{}
		}
	}
	if len(errs) > 0 {
		return q, errors.Join(errs...)
	}
	if q.to.pod != nil {
		q.to.pod.served.add(string(qm.Protocol), int(qm.Port))
	} else {
		p.outside[q.to.addr].add(string(qm.Protocol), int(qm.Port))
	}
	return q, nil
}

// queryFam returns the family of a query's packets: ICMP's or ICMPv6's,
// else that of the address the query sends to, else that of the address
// it sends from, else IPv4. A pod that sends sends from its address of
// that family, whichever address of it the query names.
func queryFam(qm simulate.QueryModel) fam {
	switch {
	case qm.Protocol == "ICMP":
		return v4
	case qm.Protocol == "ICMPv6":
		return v6
	case qm.To.IP.IsValid():
		return famOf(qm.To.IP)
	case qm.From.IP.IsValid():
		return famOf(qm.From.IP)
	}
	return v4
}

// firstOf returns the first address of family f in ips, or the zero
// Addr.
func firstOf(ips []netip.Addr, f fam) netip.Addr {
	for _, a := range ips {
		if famOf(a) == f {
			return a
		}
	}
	return netip.Addr{}
}

// underlays are the candidate underlay networks of each family, the
// first that holds no address of the scenario wins.
var underlays = [2][]netip.Prefix{
	{
		netip.MustParsePrefix("192.168.254.0/24"),
		netip.MustParsePrefix("172.31.254.0/24"),
		netip.MustParsePrefix("100.127.254.0/24"),
	},
	{
		netip.MustParsePrefix("fd5e:1ab:254::/64"),
		netip.MustParsePrefix("fd5e:1ab:253::/64"),
	},
}

// chooseUnderlay picks the underlay network of each family and the
// addresses of the lab namespace (::1), the etcds (IPv4 .240+id), the
// nodes (::10*id+n) and the outside host (::200).
func (p *plan) chooseUnderlay() error {
	used := p.scenarioAddrs()
	for _, f := range families {
		i := slices.IndexFunc(underlays[f], func(u netip.Prefix) bool { return !slices.ContainsFunc(used, u.Contains) })
		if i < 0 {
			return fmt.Errorf("%s: every lab %s underlay network (%v) holds an address of the scenario", p.file, f, underlays[f])
		}
		u := underlays[f][i]
		p.underlay[f] = u
		p.labIP[f], p.outsideIP[f] = hostAddr(u, 1), hostAddr(u, 200)
		for _, c := range p.clusters {
			if f == v4 {
				c.etcdIP = hostAddr(u, 240+c.id)
			}
			for n, nd := range c.nodes {
				nd.ips[f] = hostAddr(u, 10*c.id+n+1)
			}
		}
	}
	return nil
}

// hostAddr returns the address of u whose last byte is last (in
// decimal, also for IPv6: ::21 is node 1 of cluster 2).
func hostAddr(u netip.Prefix, last int) netip.Addr {
	b := u.Masked().Addr().AsSlice()
	if len(b) == 16 {
		last = last/100*256 + last%100/10*16 + last%10 // 240 -> ::240
		b[len(b)-2] = byte(last >> 8)
	}
	b[len(b)-1] = byte(last)
	a, _ := netip.AddrFromSlice(b)
	return a
}

// scenarioAddrs returns every address the scenario names: the
// endpoints' (but those the lab relocated) and the outside ones.
func (p *plan) scenarioAddrs() []netip.Addr {
	var out []netip.Addr
	for _, po := range p.pods {
		for _, a := range po.scenarioIPs {
			if !po.relocated[famOf(a)] {
				out = append(out, a)
			}
		}
	}
	for a := range p.outside {
		out = append(out, a)
	}
	return out
}

// describe returns the plan as lines for the log.
func (p *plan) describe() string {
	var b strings.Builder
	for _, f := range families {
		fmt.Fprintf(&b, "underlay %s: lab %s, outside host %s\n", p.underlay[f], p.labIP[f], p.outsideIP[f])
	}
	for _, c := range p.clusters {
		fmt.Fprintf(&b, "cluster %s (id %d): etcd https://%s:2379\n", c.name, c.id, c.etcdIP)
		for _, n := range c.nodes {
			fmt.Fprintf(&b, "  node %s %s,%s pod CIDRs %s,%s:", n.name, n.ips[v4], n.ips[v6], n.podCIDRs[v4], n.podCIDRs[v6])
			for _, po := range n.pods {
				ips := []string{"auto", "auto"}
				for _, f := range families {
					if po.ips[f].IsValid() {
						ips[f] = po.ips[f].String()
					}
				}
				fmt.Fprintf(&b, " %s (%s)", po.ref, strings.Join(ips, ","))
			}
			b.WriteString("\n")
		}
	}
	for _, n := range p.notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
