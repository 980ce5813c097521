package scenariogen

import (
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/policy/simulate"
)

// query returns a connection with a pod of the local cluster on at least
// one side, from a pod to itself only with Options.SelfQueries.
func (g *gen) query() simulate.Query {
	for {
		from, fromLocal, fromPod := g.side()
		to, toLocal, toPod := g.side()
		if !fromLocal && !toLocal || fromPod != "" && fromPod == toPod && !g.opts.SelfQueries {
			continue
		}
		q := simulate.Query{From: from, To: to, Port: pick(g.r, queryPorts)}
		if len(g.ports) > 0 && g.chance(0.6) {
			q.Port = pick(g.r, g.ports)
		}
		switch x := g.r.Float64(); {
		case x < 0.25:
			q.Protocol = "UDP"
		case x < 0.4:
			q.Protocol = "SCTP"
		case x < 0.5:
			q.Protocol = "TCP"
		case x < 0.62 && g.opts.ICMP:
			g.icmpQuery(&q)
		}
		return q
	}
}

// icmpQuery makes q an ICMP or ICMPv6 query of a type: of the family of
// the addresses it names (TCP when they differ), else either.
func (g *gen) icmpQuery(q *simulate.Query) {
	family := pick(g.r, []string{"IPv4", "IPv6"})
	v6 := map[bool]int{}
	for _, side := range []string{q.From, q.To} {
		if a, err := netip.ParseAddr(side); err == nil {
			v6[a.Is6()]++
		}
	}
	switch {
	case v6[true] > 0 && v6[false] > 0:
		q.Protocol = "TCP"
		return
	case v6[true] > 0:
		family = "IPv6"
	case v6[false] > 0:
		family = "IPv4"
	}
	q.Protocol = map[string]string{"IPv4": "ICMP", "IPv6": "ICMPv6"}[family]
	q.Type = fmt.Sprint(pick(g.r, queryICMPTypes[family]))
	q.Port = 0
}

// side returns a query side: a pod by name, a pod by address (with
// Options.AddressQueries) or an address that is no pod; local says
// whether it is a pod of the local cluster, pod names the pod.
func (g *gen) side() (ref string, local bool, pod string) {
	s := &g.c.Scenario
	if g.chance(0.2) {
		return pick(g.r, externalIPs), false, ""
	}
	ep := pick(g.r, s.Endpoints)
	local = ep.Cluster != RemoteCluster
	pod = ep.Namespace + "/" + ep.Name
	if !local {
		pod = RemoteCluster + "/" + pod
	}
	if g.opts.AddressQueries && len(ep.IPs) > 0 && g.chance(0.2) {
		return pick(g.r, ep.IPs), local, pod
	}
	return pod, local, pod
}
