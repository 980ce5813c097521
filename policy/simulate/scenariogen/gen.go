// Package scenariogen draws random simulation scenarios (the file format
// of policy/simulate) from a seed, for property tests that compare two
// ways of answering the same queries: namespaces with labels, pods of
// two clusters with IPv4, IPv6, both or no addresses and named ports
// whose numbers differ from pod to pod, NetworkPolicies,
// CiliumNetworkPolicies and CiliumClusterwideNetworkPolicies with
// allow and deny rules, port ranges, named ports, CIDR peers with
// excepts (IPv4 and IPv6), entities and enableDefaultDeny, and queries
// between pods (by name or address) and addresses that are no pods over
// TCP, UDP and SCTP, and ICMP and ICMPv6 queries by type against icmps
// rules. The same seed always gives the same file.
//
// The idea follows hack/bench/policydiff's generator (which also has
// to avoid what Cilium parses differently); this one lives in the main
// module and aims at the datapath: address families, ranges and denies.
package scenariogen

import (
	"fmt"
	"math/rand/v2"
	"net/netip"

	"gopkg.in/yaml.v3"
)

// The clusters of every scenario.
const (
	LocalCluster  = "cluster1"
	RemoteCluster = "cluster2"
)

// Generate returns the scenario file of seed with the given number of
// queries.
func Generate(seed uint64, queries int) []byte {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5deece66d))}
	doc := map[string]any{"cluster": LocalCluster}
	if g.chance(0.2) {
		doc["policyDefaultLocalCluster"] = false
	}
	g.namespaces = allNamespaces[:2+g.r.IntN(2)]
	var nss []any
	for _, ns := range g.namespaces {
		ls := map[string]string{}
		if g.chance(0.8) {
			ls["team"] = pick(g.r, teamValues)
		}
		nss = append(nss, map[string]any{"name": ns, "labels": ls})
	}
	doc["namespaces"] = nss
	local, remote := 4+g.r.IntN(7), g.r.IntN(3)
	var eps []any
	for i := range local + remote {
		eps = append(eps, g.endpoint(i, i >= local))
	}
	doc["endpoints"] = eps
	var pols []any
	for i := range 1 + g.r.IntN(6) {
		pols = append(pols, g.policy(i))
	}
	doc["policies"] = pols
	var qs []any
	for range queries {
		qs = append(qs, g.query())
	}
	doc["queries"] = qs
	out, err := yaml.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("marshal generated scenario: %v", err)) // plain maps always marshal
	}
	return out
}

// gen draws one scenario.
type gen struct {
	r          *rand.Rand
	namespaces []string
	// refs are the pods ("ns/name", "cluster2/ns/name") and whether
	// they are local; addrs their addresses.
	refs  []podRef
	addrs []string
	// ports are the port numbers the policies name, with the edges of
	// their ranges and their neighbours: queries aim at them.
	ports []int
}

type podRef struct {
	ref   string
	local bool
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// endpoint returns pod i: labels, addresses of one or both families (or
// none), and named ports for local pods.
func (g *gen) endpoint(i int, remote bool) map[string]any {
	ns := pick(g.r, g.namespaces)
	name := fmt.Sprintf("pod-%d", i)
	ls := map[string]string{"app": pick(g.r, appValues)}
	if g.chance(0.5) {
		ls["tier"] = pick(g.r, tierValues)
	}
	ep := map[string]any{"name": name, "namespace": ns, "labels": ls}
	net := 0
	if remote {
		net = 1
		ep["cluster"] = RemoteCluster
		g.refs = append(g.refs, podRef{RemoteCluster + "/" + ns + "/" + name, false})
	} else {
		g.refs = append(g.refs, podRef{ns + "/" + name, true})
	}
	var ips []string
	switch x := g.r.Float64(); {
	case x < 0.45:
		ips = []string{fmt.Sprintf("10.%d.0.%d", net, i+1)}
	case x < 0.7:
		ips = []string{fmt.Sprintf("10.%d.0.%d", net, i+1), fmt.Sprintf("fd00:%d::%x", net, i+1)}
	case x < 0.9:
		ips = []string{fmt.Sprintf("fd00:%d::%x", net, i+1)}
	}
	if len(ips) > 0 {
		ep["ips"] = ips
		g.addrs = append(g.addrs, ips...)
	}
	if !remote {
		var ports []any
		for _, name := range []string{"dns", "http", "metrics", "diameter"} {
			if g.chance(0.5) {
				p := pick(g.r, namedPortVariants[name])
				ports = append(ports, map[string]any{"name": p.name, "port": p.port, "protocol": p.proto})
			}
		}
		if len(ports) > 0 {
			ep["ports"] = ports
		}
	}
	return ep
}

// query returns a connection with a local pod on at least one side.
func (g *gen) query() map[string]any {
	for {
		from, fromLocal := g.side()
		to, toLocal := g.side()
		if !fromLocal && !toLocal {
			continue
		}
		q := map[string]any{"from": from, "to": to, "port": pick(g.r, queryPorts)}
		if len(g.ports) > 0 && g.chance(0.6) {
			q["port"] = pick(g.r, g.ports)
		}
		switch x := g.r.Float64(); {
		case x < 0.25:
			q["protocol"] = "UDP"
		case x < 0.4:
			q["protocol"] = "SCTP"
		case x < 0.5:
			q["protocol"] = "TCP"
		case x < 0.62:
			g.icmpQuery(q, from, to)
		}
		return q
	}
}

// icmpQuery makes q an ICMP or ICMPv6 query of a type: of the family of
// the addresses it names (TCP when they differ), else either.
func (g *gen) icmpQuery(q map[string]any, from, to string) {
	family := pick(g.r, []string{"IPv4", "IPv6"})
	v6 := map[bool]int{}
	for _, side := range []string{from, to} {
		if a, err := netip.ParseAddr(side); err == nil {
			v6[a.Is6()]++
		}
	}
	switch {
	case v6[true] > 0 && v6[false] > 0:
		q["protocol"] = "TCP"
		return
	case v6[true] > 0:
		family = "IPv6"
	case v6[false] > 0:
		family = "IPv4"
	}
	q["protocol"] = map[string]string{"IPv4": "ICMP", "IPv6": "ICMPv6"}[family]
	q["type"] = pick(g.r, queryICMPTypes[family])
	delete(q, "port")
}

// side returns a query side: a pod by name, a pod by address, or an
// address that is no pod; local says whether it is surely a local pod.
func (g *gen) side() (ref string, local bool) {
	switch x := g.r.Float64(); {
	case x < 0.2:
		return pick(g.r, externalIPs), false
	case x < 0.35 && len(g.addrs) > 0:
		return pick(g.r, g.addrs), false
	}
	p := pick(g.r, g.refs)
	return p.ref, p.local
}
