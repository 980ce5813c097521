package scenariogen

import (
	"fmt"
	"strings"
)

var (
	appValues     = []string{"web", "api", "db", "cache"}
	tierValues    = []string{"front", "back"}
	teamValues    = []string{"red", "blue"}
	allNamespaces = []string{"ns-a", "ns-b", "ns-c"}
)

type namedPort struct {
	name  string
	port  int
	proto string
}

// namedPortVariants are the container ports pods may declare: one name
// with different numbers (and protocols) on different pods.
var namedPortVariants = map[string][]namedPort{
	"http":     {{"http", 80, "TCP"}, {"http", 8080, "TCP"}},
	"metrics":  {{"metrics", 9090, "TCP"}, {"metrics", 9091, "TCP"}},
	"dns":      {{"dns", 53, "UDP"}, {"dns", 53, "TCP"}, {"dns", 5353, "UDP"}},
	"diameter": {{"diameter", 3868, "SCTP"}, {"diameter", 3869, "SCTP"}},
}

// CIDR peers, their excepts (strictly inside) and addresses that are no
// pod, inside and outside of them, in both families. 10.0.0.0/8 and
// fd00::/16 hold the pods: a CIDR peer never selects those.
var (
	cidrs = []string{"192.0.2.0/24", "198.51.100.0/24", "203.0.113.64/26", "10.0.0.0/8", "0.0.0.0/0",
		"198.51.100.7/32", "2001:db8::/32", "2001:db8:1::/48", "fd00::/16", "::/0"}
	excepts = map[string][]string{
		"192.0.2.0/24":    {"192.0.2.128/25", "192.0.2.8/29"},
		"198.51.100.0/24": {"198.51.100.0/26", "198.51.100.7/32"},
		"10.0.0.0/8":      {"10.99.0.0/16"},
		"0.0.0.0/0":       {"192.0.2.0/24", "10.0.0.0/8"},
		"2001:db8::/32":   {"2001:db8:1::/48", "2001:db8::7/128"},
		"::/0":            {"2001:db8::/32"},
	}
	externalIPs = []string{"192.0.2.1", "192.0.2.130", "192.0.2.9", "198.51.100.7", "198.51.100.70",
		"203.0.113.70", "8.8.8.8", "10.99.0.1", "2001:db8::1", "2001:db8::7", "2001:db8:1::1", "2001:db9::1", "fd00:99::1"}
)

// queryPorts are policy ports, named port values, range edges and others.
var queryPorts = []int{80, 443, 53, 5432, 8080, 8081, 9090, 9091, 5353, 3868, 3869, 8000, 8010, 8011, 8099, 8100,
	9000, 9063, 9064, 9127, 9128, 50, 59, 60, 7}

// policy returns policy i: a NetworkPolicy, a CiliumNetworkPolicy or a
// CiliumClusterwideNetworkPolicy.
func (g *gen) policy(i int) map[string]any {
	name := fmt.Sprintf("pol-%d", i)
	switch x := g.r.Float64(); {
	case x < 0.35:
		return map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
			"metadata": map[string]any{"name": name, "namespace": pick(g.r, g.namespaces)}, "spec": g.networkPolicySpec()}
	case x < 0.85:
		return map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
			"metadata": map[string]any{"name": name, "namespace": pick(g.r, g.namespaces)}, "spec": g.ciliumRule(false)}
	}
	return map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
		"metadata": map[string]any{"name": name}, "spec": g.ciliumRule(true)}
}

// ciliumRule returns a rule with some of ingress, ingressDeny, egress and
// egressDeny, sometimes with enableDefaultDeny.
func (g *gen) ciliumRule(clusterwide bool) map[string]any {
	r := map[string]any{"endpointSelector": g.subjectSelector(clusterwide)}
	for i, dir := range []string{"ingress", "ingressDeny", "egress", "egressDeny"} {
		if g.chance([]float64{0.6, 0.35, 0.5, 0.3}[i]) {
			var rules []any
			for range 1 + g.r.IntN(2) {
				rules = append(rules, g.ciliumPeerRule(dir))
			}
			r[dir] = rules
		}
	}
	if len(r) == 1 {
		r["ingressDeny"] = []any{g.ciliumPeerRule("ingressDeny")}
	}
	for _, dir := range []string{"ingress", "egress"} {
		if allows, ok := r[dir].([]any); ok && g.chance(0.4) {
			denies, _ := r[dir+"Deny"].([]any)
			r[dir+"Deny"] = append(denies, g.overlappingDeny(pick(g.r, allows).(map[string]any)))
		}
	}
	if g.chance(0.25) {
		dd := map[string]any{}
		for _, dir := range []string{"ingress", "egress"} {
			if g.chance(0.7) {
				dd[dir] = g.chance(0.3)
			}
		}
		r["enableDefaultDeny"] = dd
	}
	return r
}

// overlappingDeny returns a deny rule for the peers of the allow rule
// allow, over all its ports or a range or protocol that covers some of
// them: the allow keys it covers must still deny in the datapath.
func (g *gen) overlappingDeny(allow map[string]any) map[string]any {
	deny := map[string]any{}
	for k, v := range allow {
		if k != "toPorts" {
			deny[k] = v
		}
	}
	if _, ok := allow["icmps"]; ok {
		// The same ICMP types, or (no icmps) every port and type of the
		// same peers.
		if len(deny) > 1 && g.chance(0.5) {
			delete(deny, "icmps")
		}
		return deny
	}
	switch x := g.r.Float64(); {
	case x < 0.4: // every port
		if len(deny) == 0 {
			deny["toPorts"] = []any{map[string]any{"ports": []any{map[string]any{"port": "0", "protocol": "ANY"}}}}
		}
	case x < 0.7:
		deny["toPorts"] = []any{map[string]any{"ports": []any{map[string]any{"port": "0", "protocol": pick(g.r, []string{"TCP", "UDP"})}}}}
	default:
		lo, hi := g.portRange()
		deny["toPorts"] = []any{map[string]any{"ports": []any{map[string]any{"port": fmt.Sprint(lo), "endPort": hi}}}}
	}
	return deny
}

// ciliumPeerRule returns one rule of direction dir: one peer kind or
// none, maybe toPorts.
func (g *gen) ciliumPeerRule(dir string) map[string]any {
	from := "from"
	if strings.HasPrefix(dir, "egress") {
		from = "to"
	}
	r := map[string]any{}
	switch x := g.r.Float64(); {
	case x < 0.4:
		r[from+"Endpoints"] = []any{g.peerSelector()}
	case x < 0.5:
		r[from+"Entities"] = []any{pick(g.r, []string{"all", "world", "cluster", "host"})}
	case x < 0.6:
		r[from+"CIDR"] = []any{pick(g.r, cidrs)}
	case x < 0.8:
		r[from+"CIDRSet"] = []any{g.cidrRule("cidr")}
	}
	if g.chance(0.15) {
		r["icmps"] = []any{map[string]any{"fields": g.icmpFields()}}
		return r
	}
	if g.chance(0.6) || len(r) == 0 {
		var ports []any
		for range 1 + g.r.IntN(2) {
			ports = append(ports, g.ciliumPort())
		}
		r["toPorts"] = []any{map[string]any{"ports": ports}}
	}
	return r
}

// ciliumPort returns a toPorts port: a number, a range, a name or "0",
// with a protocol or none.
func (g *gen) ciliumPort() map[string]any {
	p := map[string]any{}
	switch x := g.r.Float64(); {
	case x < 0.4:
		port := pick(g.r, []int{80, 443, 53, 8080, 9090, 3868})
		p["port"] = fmt.Sprint(port)
		g.ports = append(g.ports, port)
	case x < 0.65:
		lo, hi := g.portRange()
		p["port"], p["endPort"] = fmt.Sprint(lo), hi
	case x < 0.9:
		p["port"] = pick(g.r, []string{"http", "metrics", "dns", "diameter", "nosuch"})
	default:
		p["port"] = "0"
	}
	if g.chance(0.7) {
		p["protocol"] = pick(g.r, []string{"TCP", "TCP", "UDP", "SCTP", "ANY"})
	}
	return p
}

// icmpTypes are the ICMP and ICMPv6 types rules and queries use, by
// number and by the names icmps rules accept; queryICMPTypes adds
// neighbour discovery (never policed) and an error type.
var (
	icmpTypes = map[string][]any{
		"IPv4": {8, "EchoRequest", 0, "EchoReply", 13},
		"IPv6": {128, "EchoRequest", 129, "EchoReply", 1},
	}
	queryICMPTypes = map[string][]any{
		"IPv4": {8, "EchoRequest", 0, 13, 3},
		"IPv6": {128, "EchoRequest", 129, 1, 135},
	}
)

// icmpFields returns the fields of an icmps entry: one or two types of
// either family (the family left out means IPv4).
func (g *gen) icmpFields() []any {
	var fields []any
	for range 1 + g.r.IntN(2) {
		family := pick(g.r, []string{"IPv4", "IPv6"})
		f := map[string]any{"type": pick(g.r, icmpTypes[family])}
		if family == "IPv6" || g.chance(0.5) {
			f["family"] = family
		}
		fields = append(fields, f)
	}
	return fields
}

// portRange returns a range whose edges are not powers of two apart, so
// that it takes several prefixes.
func (g *gen) portRange() (lo, hi int) {
	lo = pick(g.r, []int{8000, 8010, 9000, 9064, 50})
	hi = lo + pick(g.r, []int{10, 63, 89, 100})
	g.ports = append(g.ports, lo-1, lo, lo+1, (lo+hi)/2, hi-1, hi, hi+1)
	return lo, hi
}

func (g *gen) cidrRule(key string) map[string]any {
	c := pick(g.r, cidrs)
	r := map[string]any{key: c}
	if ex := excepts[c]; len(ex) > 0 && g.chance(0.7) {
		var list []any
		for _, e := range ex {
			if g.chance(0.6) {
				list = append(list, e)
			}
		}
		if len(list) > 0 {
			r["except"] = list
		}
	}
	return r
}

// subjectSelector returns an endpointSelector; a namespaced policy's
// never names the namespace.
func (g *gen) subjectSelector(clusterwide bool) map[string]any {
	ml := map[string]any{}
	if g.chance(0.75) {
		ml["app"] = pick(g.r, appValues)
	}
	if g.chance(0.2) {
		ml["tier"] = pick(g.r, tierValues)
	}
	if clusterwide && g.chance(0.4) {
		ml["k8s:io.kubernetes.pod.namespace"] = pick(g.r, g.namespaces)
	}
	return map[string]any{"matchLabels": ml}
}

// peerSelector returns a fromEndpoints/toEndpoints selector.
func (g *gen) peerSelector() map[string]any {
	ml := map[string]any{}
	if g.chance(0.6) {
		ml["app"] = pick(g.r, appValues)
	}
	switch x := g.r.Float64(); {
	case x < 0.2:
		ml["k8s:io.kubernetes.pod.namespace"] = pick(g.r, g.namespaces)
	case x < 0.3:
		ml["io.cilium.k8s.namespace.labels.team"] = pick(g.r, teamValues)
	case x < 0.4:
		ml["k8s:io.cilium.k8s.policy.cluster"] = pick(g.r, []string{LocalCluster, RemoteCluster})
	}
	sel := map[string]any{"matchLabels": ml}
	if g.chance(0.15) {
		sel["matchExpressions"] = []any{map[string]any{"key": "tier", "operator": pick(g.r, []string{"Exists", "DoesNotExist"})}}
	}
	return sel
}

// networkPolicySpec returns a NetworkPolicy spec with 0-2 rules per
// direction and sometimes policyTypes.
func (g *gen) networkPolicySpec() map[string]any {
	spec := map[string]any{"podSelector": map[string]any{}}
	if g.chance(0.7) {
		spec["podSelector"] = map[string]any{"matchLabels": map[string]any{"app": pick(g.r, appValues)}}
	}
	ingress, egress := g.chance(0.7), g.chance(0.5)
	if ingress {
		spec["ingress"] = g.networkPolicyRules("from")
	}
	if egress {
		spec["egress"] = g.networkPolicyRules("to")
	}
	if g.chance(0.4) {
		var types []any
		if ingress || !egress {
			types = append(types, "Ingress")
		}
		if egress {
			types = append(types, "Egress")
		}
		spec["policyTypes"] = types
	}
	return spec
}

func (g *gen) networkPolicyRules(peerKey string) []any {
	var out []any
	for range g.r.IntN(3) {
		r := map[string]any{}
		if g.chance(0.8) {
			var peers []any
			for range 1 + g.r.IntN(2) {
				peers = append(peers, g.networkPolicyPeer())
			}
			r[peerKey] = peers
		}
		if g.chance(0.6) {
			var ports []any
			for range 1 + g.r.IntN(2) {
				ports = append(ports, g.networkPolicyPort())
			}
			r["ports"] = ports
		}
		out = append(out, r)
	}
	return out
}

func (g *gen) networkPolicyPeer() map[string]any {
	pod := map[string]any{"matchLabels": map[string]any{"app": pick(g.r, appValues)}}
	switch x := g.r.Float64(); {
	case x < 0.35:
		return map[string]any{"podSelector": pod}
	case x < 0.55:
		return map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": pick(g.r, teamValues)}}}
	case x < 0.7:
		return map[string]any{"namespaceSelector": map[string]any{}, "podSelector": pod}
	}
	return map[string]any{"ipBlock": g.cidrRule("cidr")}
}

func (g *gen) networkPolicyPort() map[string]any {
	p := map[string]any{}
	if g.chance(0.6) {
		p["protocol"] = pick(g.r, []string{"TCP", "UDP", "SCTP"})
	}
	switch x := g.r.Float64(); {
	case x < 0.4:
		port := pick(g.r, []int{80, 443, 53, 8080, 9090, 3868})
		p["port"] = port
		g.ports = append(g.ports, port)
	case x < 0.65:
		lo, hi := g.portRange()
		p["port"], p["endPort"] = lo, hi
	case x < 0.9:
		p["port"] = pick(g.r, []string{"http", "metrics", "dns", "diameter", "nosuch"})
	}
	return p
}
