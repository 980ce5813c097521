package scenariogen

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apiary-net/apiary/policy/simulate"
)

// endpoint returns pod i: labels, addresses and, for local pods, named
// ports.
func (g *gen) endpoint(i int, remote bool) simulate.Endpoint {
	ep := simulate.Endpoint{
		Name:      fmt.Sprintf("pod-%d", i),
		Namespace: pick(g.r, g.namespaces),
		Labels:    map[string]string{"app": pick(g.r, appValues)},
	}
	if g.chance(0.6) {
		ep.Labels["tier"] = pick(g.r, tierValues)
	}
	if g.chance(0.4) {
		ep.Labels["version"] = pick(g.r, versionValues)
	}
	net := 0
	if remote {
		net = 1
		ep.Cluster = RemoteCluster
	}
	ep.IPs = g.addresses(net, i)
	if remote || !g.chance(0.7) {
		return ep
	}
	for _, name := range slices.Sorted(maps.Keys(namedPortVariants)) {
		if g.chance(0.5) {
			ep.Ports = append(ep.Ports, pick(g.r, namedPortVariants[name]))
		}
	}
	return ep
}

// addresses returns the addresses of pod i of network net: one IPv4
// address, or with Options.Families also IPv6 only, both or none.
func (g *gen) addresses(net, i int) []string {
	v4, v6 := fmt.Sprintf("10.%d.0.%d", net, i+1), fmt.Sprintf("fd00:%d::%x", net, i+1)
	if !g.opts.Families {
		return []string{v4}
	}
	switch x := g.r.Float64(); {
	case x < 0.45:
		return []string{v4}
	case x < 0.7:
		return []string{v4, v6}
	case x < 0.9:
		return []string{v6}
	}
	return nil
}
