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
	underlay netip.Prefix
	// labIP is the lab namespace's address on the underlay bridge.
	labIP     netip.Addr
	outsideIP netip.Addr
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
	ip      netip.Addr
	podCIDR netip.Prefix
	pods    []*pod
}

// pod is one scenario endpoint.
type pod struct {
	index   int
	ref     string
	spec    simulate.Endpoint
	cluster *cluster
	node    *node
	// ip is the address the lab gives the pod: the scenario's, or
	// invalid until the agent's IPAM hands one out.
	ip netip.Addr
	// scenarioIPs are the file's addresses of the endpoint, which
	// queries may name.
	scenarioIPs []netip.Addr
	// relocated: the lab could not give the pod its scenario address.
	relocated bool
	id        uint16
	served    ports
}

// ports are the TCP and UDP ports a server answers.
type ports struct{ tcp, udp []int }

func (p *ports) add(proto string, port int) {
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
}

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

// resolveQuery turns query i into its two sides; the lab runs IPv4 TCP
// and UDP only.
func (p *plan) resolveQuery(i int, qm simulate.QueryModel, r simulate.Result, byModel map[*simulate.EndpointModel]*pod) (*query, error) {
	q := &query{result: r, model: qm}
	entry := fmt.Sprintf("%s: queries[%d] (%s -> %s)", p.file, i, qm.Query.From, qm.Query.To)
	if qm.Protocol != "TCP" && qm.Protocol != "UDP" {
		return q, fmt.Errorf("%s: protocol %s: the lab runs TCP and UDP queries only", entry, qm.Protocol)
	}
	var errs []error
	for _, s := range []struct {
		model *simulate.SideModel
		out   *side
	}{{&qm.From, &q.from}, {&qm.To, &q.to}} {
		if s.model.IP.IsValid() && !s.model.IP.Unmap().Is4() {
			errs = append(errs, fmt.Errorf("%s: %s: the lab is IPv4 only", entry, s.model.IP))
			continue
		}
		if s.model.Endpoint != nil {
			s.out.pod = byModel[s.model.Endpoint]
			if s.model.IP.IsValid() && s.model.IP.Unmap() != firstIPv4(s.out.pod.scenarioIPs) {
				errs = append(errs, fmt.Errorf("%s: %s: the lab gives each pod one IPv4 address, the first of its ips", entry, s.model.IP))
			}
			continue
		}
		s.out.addr = s.model.IP.Unmap()
		if p.outside[s.out.addr] == nil {
			p.outside[s.out.addr] = &ports{}
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

// firstIPv4 returns the first IPv4 address of ips, or the zero Addr.
func firstIPv4(ips []netip.Addr) netip.Addr {
	for _, a := range ips {
		if a.Is4() {
			return a
		}
	}
	return netip.Addr{}
}

// underlays are the candidate underlay networks, the first that holds no
// address of the scenario wins.
var underlays = []netip.Prefix{
	netip.MustParsePrefix("192.168.254.0/24"),
	netip.MustParsePrefix("172.31.254.0/24"),
	netip.MustParsePrefix("100.127.254.0/24"),
}

// chooseUnderlay picks the underlay network and the addresses of the lab
// namespace, the etcds (.240+id), the nodes (.10*id+n) and the outside
// host (.200).
func (p *plan) chooseUnderlay() error {
	used := p.scenarioAddrs()
	for _, u := range underlays {
		if slices.ContainsFunc(used, u.Contains) {
			continue
		}
		p.underlay = u
		base := u.Addr().As4()
		at := func(last int) netip.Addr { b := base; b[3] = byte(last); return netip.AddrFrom4(b) }
		p.labIP, p.outsideIP = at(1), at(200)
		for _, c := range p.clusters {
			c.etcdIP = at(240 + c.id)
			for n, nd := range c.nodes {
				nd.ip = at(10*c.id + n + 1)
			}
		}
		return nil
	}
	return fmt.Errorf("%s: every lab underlay network (%v) holds an address of the scenario", p.file, underlays)
}

// scenarioAddrs returns every IPv4 address the scenario names: the
// endpoints' (but those of relocated pods) and the outside ones.
func (p *plan) scenarioAddrs() []netip.Addr {
	var out []netip.Addr
	for _, po := range p.pods {
		if !po.relocated {
			out = append(out, po.scenarioIPs...)
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
	fmt.Fprintf(&b, "underlay %s: lab %s, outside host %s\n", p.underlay, p.labIP, p.outsideIP)
	for _, c := range p.clusters {
		fmt.Fprintf(&b, "cluster %s (id %d): etcd https://%s:2379\n", c.name, c.id, c.etcdIP)
		for _, n := range c.nodes {
			fmt.Fprintf(&b, "  node %s %s pod CIDR %s:", n.name, n.ip, n.podCIDR)
			for _, po := range n.pods {
				ip := "auto"
				if po.ip.IsValid() {
					ip = po.ip.String()
				}
				fmt.Fprintf(&b, " %s (%s)", po.ref, ip)
			}
			b.WriteString("\n")
		}
	}
	for _, n := range p.notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
