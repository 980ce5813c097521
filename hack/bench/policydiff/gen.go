// Package policydiff checks apiary's policy engine against Cilium's on
// generated scenarios: namespaces, pods of two clusters with labels and
// named ports, NetworkPolicies, CiliumNetworkPolicies and
// CiliumClusterwideNetworkPolicies using L3/L4 features, and random
// connections. Each scenario goes through apiary's offline simulator
// (package policy/simulate) and through Cilium's engine wired as its
// agent wires it (package ciliumpolicy); the verdict of every direction
// that has a policy subject (the source's egress, the destination's
// ingress) must agree. The generator only writes policies both accept:
// where they differ in what they accept, see Generate.
package policydiff

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/apiary-net/apiary/policy/simulate"
)

// The clusters of every scenario: policies apply to endpoints of
// LocalCluster; RemoteCluster is a meshed cluster.
const (
	LocalCluster  = "cluster1"
	RemoteCluster = "cluster2"
)

// Case is one generated scenario.
type Case struct {
	Seed uint64
	// Scenario holds everything but the policies.
	Scenario simulate.Scenario
	// Policies are the policy objects, one YAML document each.
	Policies []string
	// EgressPortNames are the port names used by egress and egressDeny
	// rules (see namedPortUnionCase).
	EgressPortNames map[string]bool
}

// YAML returns the scenario with its policies and the given queries (a
// scenario's differing ones) as a scenario file for `apiary policy
// simulate -f`.
func (c *Case) YAML(queries []simulate.Query) string {
	s := c.Scenario
	s.Queries = queries
	out, err := yaml.Marshal(&s)
	if err != nil {
		return fmt.Sprintf("marshal scenario: %v", err)
	}
	var b strings.Builder
	b.Write(out)
	b.WriteString("policies:\n")
	for _, p := range c.Policies {
		for i, line := range strings.Split(strings.TrimRight(p, "\n"), "\n") {
			if i == 0 {
				b.WriteString("  - " + line + "\n")
			} else {
				b.WriteString("    " + line + "\n")
			}
		}
	}
	return b.String()
}

// gen draws one scenario.
type gen struct {
	r          *rand.Rand
	namespaces []string
	nsLabels   map[string]map[string]string
	c          *Case
}

var (
	appValues     = []string{"web", "api", "db", "cache"}
	tierValues    = []string{"front", "back"}
	versionValues = []string{"v1", "v2"}
	teamValues    = []string{"red", "blue"}
	envValues     = []string{"prod", "dev"}
	allNamespaces = []string{"ns-a", "ns-b", "ns-c"}
)

// namedPortVariants are the container ports pods may declare: the same
// name with different numbers (and protocols) on different pods.
var namedPortVariants = map[string][]simulate.Port{
	"http":    {{Name: "http", Port: 80, Protocol: "TCP"}, {Name: "http", Port: 8080, Protocol: "TCP"}},
	"metrics": {{Name: "metrics", Port: 9090, Protocol: "TCP"}, {Name: "metrics", Port: 9091, Protocol: "TCP"}},
	"dns":     {{Name: "dns", Port: 53, Protocol: "UDP"}, {Name: "dns", Port: 53, Protocol: "TCP"}, {Name: "dns", Port: 5353, Protocol: "UDP"}},
}

// Prefixes in policies and their excepts (each strictly inside), and
// addresses that are no endpoint, inside and outside of them. 10.0.0.0/8
// holds the pods: a CIDR peer must not select them.
var (
	cidrs = []string{"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "203.0.113.64/26",
		"10.0.0.0/8", "0.0.0.0/0", "198.51.100.7/32", "192.0.2.0/25", "2001:db8::/32", "::/0"}
	excepts = map[string][]string{
		"192.0.2.0/24":    {"192.0.2.128/25", "192.0.2.8/29"},
		"198.51.100.0/24": {"198.51.100.0/26", "198.51.100.7/32"},
		"203.0.113.0/24":  {"203.0.113.64/26"},
		"10.0.0.0/8":      {"10.99.0.0/16"},
		"0.0.0.0/0":       {"192.0.2.0/24", "10.0.0.0/8"},
		"192.0.2.0/25":    {"192.0.2.0/28"},
		"2001:db8::/32":   {"2001:db8:1::/48"},
		"::/0":            {"2001:db8::/32"},
	}
	externalIPs = []string{"192.0.2.1", "192.0.2.130", "192.0.2.9", "198.51.100.7", "198.51.100.70",
		"203.0.113.5", "203.0.113.70", "8.8.8.8", "10.99.0.1", "2001:db8::1", "2001:db8:1::1", "2001:db9::1"}
)

// Ports of queries: policy ports, named port values, range edges and
// others.
var queryPorts = []int{80, 443, 53, 5432, 8080, 8081, 9090, 9091, 5353, 8000, 8050, 8100, 8101, 9000, 55, 60, 61, 7}

// Generate returns the scenario of seed: 2-3 namespaces with labels,
// 5-12 pods of the local cluster and 0-2 of the remote one, 1-6 policies,
// and queries connections.
//
// Inputs the two engines accept differently are not generated:
//   - Cilium refuses rules combining two peer kinds (fromEndpoints and
//     fromCIDR, ...) and rules without entries; apiary accepts them. One
//     peer kind per rule, at least one entry per rule.
//   - apiary refuses a CiliumNetworkPolicy endpointSelector naming the
//     namespace (Cilium overrides it with a warning) and an except equal
//     to its cidr (Cilium accepts it). Namespaced subjects never name a
//     namespace; excepts are strictly inside.
//   - The CRD schema, which the API server applies before Cilium sees a
//     policy, refuses lower-case protocols; apiary accepts them.
//     Protocols are upper case.
//   - Remote pods declare no named ports: Cilium's ipcache knows the
//     named ports of its own cluster's pods.
//
// Nor are the semantic differences docs/policy.md lists under
// "Differences from Cilium": enableDefaultDeny true in a direction
// without entries, NetworkPolicy rules of a direction policyTypes leaves
// out, the world-ipv4 and world-ipv6 entities.
func Generate(seed uint64, queries int) *Case {
	g := &gen{
		r:        rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		nsLabels: map[string]map[string]string{},
		c:        &Case{Seed: seed, EgressPortNames: map[string]bool{}},
	}
	s := &g.c.Scenario
	s.Cluster = LocalCluster
	if g.chance(0.2) {
		f := false
		s.PolicyDefaultLocalCluster = &f
	}
	g.namespaces = slices.Clone(allNamespaces[:2+g.r.IntN(2)])
	for _, ns := range g.namespaces {
		ls := map[string]string{}
		if g.chance(0.8) {
			ls["team"] = pick(g.r, teamValues)
		}
		if g.chance(0.5) {
			ls["env"] = pick(g.r, envValues)
		}
		g.nsLabels[ns] = ls
		s.Namespaces = append(s.Namespaces, simulate.Namespace{Name: ns, Labels: ls})
	}
	local, remote := 5+g.r.IntN(8), g.r.IntN(3)
	for i := range local + remote {
		s.Endpoints = append(s.Endpoints, g.endpoint(i, i >= local))
	}
	for i := range 1 + g.r.IntN(6) {
		g.c.Policies = append(g.c.Policies, g.policy(i))
	}
	for range queries {
		s.Queries = append(s.Queries, g.query())
	}
	return g.c
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func (g *gen) endpoint(i int, remote bool) simulate.Endpoint {
	ep := simulate.Endpoint{
		Name:      fmt.Sprintf("pod-%d", i),
		Namespace: pick(g.r, g.namespaces),
		Labels:    map[string]string{"app": pick(g.r, appValues)},
		IPs:       []string{fmt.Sprintf("10.0.%d.%d", i/200, 1+i%200)},
	}
	if g.chance(0.6) {
		ep.Labels["tier"] = pick(g.r, tierValues)
	}
	if g.chance(0.4) {
		ep.Labels["version"] = pick(g.r, versionValues)
	}
	if remote {
		ep.Cluster = RemoteCluster
		ep.IPs = []string{fmt.Sprintf("10.1.%d.%d", i/200, 1+i%200)}
		return ep
	}
	if g.chance(0.6) {
		for _, name := range slices.Sorted(maps.Keys(namedPortVariants)) {
			if g.chance(0.5) {
				ep.Ports = append(ep.Ports, pick(g.r, namedPortVariants[name]))
			}
		}
	}
	return ep
}

// policy returns policy i as a YAML document: a NetworkPolicy, a
// CiliumNetworkPolicy or a CiliumClusterwideNetworkPolicy.
func (g *gen) policy(i int) string {
	name := fmt.Sprintf("pol-%d", i)
	var obj map[string]any
	switch x := g.r.Float64(); {
	case x < 0.4:
		ns := pick(g.r, g.namespaces)
		obj = map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": g.networkPolicySpec()}
	case x < 0.85:
		ns := pick(g.r, g.namespaces)
		obj = map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
			"metadata": map[string]any{"name": name, "namespace": ns}}
		g.ciliumSpecs(obj, false)
	default:
		obj = map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
			"metadata": map[string]any{"name": name}}
		g.ciliumSpecs(obj, true)
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func (g *gen) ciliumSpecs(obj map[string]any, clusterwide bool) {
	if g.chance(0.8) {
		obj["spec"] = g.ciliumRule(clusterwide)
		return
	}
	obj["specs"] = []any{g.ciliumRule(clusterwide), g.ciliumRule(clusterwide)}
}

// ciliumRule returns a rule with 1-4 of ingress, ingressDeny, egress
// and egressDeny, sometimes with enableDefaultDeny.
func (g *gen) ciliumRule(clusterwide bool) map[string]any {
	r := map[string]any{"endpointSelector": g.subjectSelector(clusterwide)}
	dirs := []string{"ingress", "ingressDeny", "egress", "egressDeny"}
	probs := []float64{0.6, 0.25, 0.5, 0.2}
	for i, dir := range dirs {
		if g.chance(probs[i]) {
			r[dir] = g.ciliumPeerRules(dir)
		}
	}
	if len(r) == 1 {
		r["ingress"] = g.ciliumPeerRules("ingress")
	}
	if g.chance(0.15) {
		dd := map[string]any{}
		for _, dir := range []string{"ingress", "egress"} {
			if g.chance(0.6) {
				// true only in a direction with entries: apiary turns
				// default deny on without entries, Cilium only where
				// the rule has some (docs/policy.md, "Differences from
				// Cilium").
				_, allow := r[dir]
				_, deny := r[dir+"Deny"]
				dd[dir] = (allow || deny) && g.chance(0.5)
			}
		}
		r["enableDefaultDeny"] = dd
	}
	return r
}

func (g *gen) ciliumPeerRules(dir string) []any {
	var out []any
	for range 1 + g.r.IntN(2) {
		out = append(out, g.ciliumPeerRule(dir))
	}
	return out
}

// ciliumPeerRule returns one rule of direction dir: at most one peer
// kind, maybe toPorts.
func (g *gen) ciliumPeerRule(dir string) map[string]any {
	from := "from"
	if strings.HasPrefix(dir, "egress") {
		from = "to"
	}
	r := map[string]any{}
	switch x := g.r.Float64(); {
	case x < 0.4:
		var sels []any
		for range 1 + g.r.IntN(2) {
			sels = append(sels, g.peerSelector())
		}
		r[from+"Endpoints"] = sels
	case x < 0.55:
		r[from+"Entities"] = g.entities()
	case x < 0.65:
		r[from+"CIDR"] = []any{pick(g.r, cidrs)}
	case x < 0.8:
		r[from+"CIDRSet"] = []any{g.cidrRule("cidr")}
	}
	if g.chance(0.55) || len(r) == 0 && g.chance(0.7) {
		var ports []any
		for range 1 + g.r.IntN(2) {
			ports = append(ports, g.ciliumPort(dir))
		}
		r["toPorts"] = []any{map[string]any{"ports": ports}}
	}
	return r
}

// entities returns 1-2 entities. Not world-ipv4 and world-ipv6:
// apiary labels every CIDR identity reserved:world, as Cilium does with
// one IP family enabled, so they select no address; Cilium with both
// families (its default, which the test runs) labels them world-ipv4 or
// world-ipv6 (docs/policy.md, "Differences from Cilium").
func (g *gen) entities() []any {
	all := []string{"all", "world", "cluster", "host", "remote-node"}
	var out []any
	for range 1 + g.r.IntN(2) {
		out = append(out, pick(g.r, all))
	}
	return out
}

// cidrRule returns a CIDR with maybe excepts, keyed cidrKey ("cidr" in
// Cilium rules and ipBlock).
func (g *gen) cidrRule(cidrKey string) map[string]any {
	c := pick(g.r, cidrs)
	r := map[string]any{cidrKey: c}
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

// ciliumPort returns a toPorts port: a number, a range, a name or "0",
// with a protocol or none (ANY).
func (g *gen) ciliumPort(dir string) map[string]any {
	p := map[string]any{}
	switch x := g.r.Float64(); {
	case x < 0.45:
		p["port"] = fmt.Sprint(pick(g.r, []int{80, 443, 53, 5432, 8080, 9090}))
	case x < 0.6:
		lo := pick(g.r, []int{8000, 9000, 50})
		p["port"], p["endPort"] = fmt.Sprint(lo), lo+pick(g.r, []int{10, 99, 100})
	case x < 0.9:
		name := pick(g.r, []string{"http", "metrics", "dns", "nosuch"})
		p["port"] = name
		if g.chance(0.1) {
			p["port"] = strings.ToUpper(name) // names are case-insensitive
		}
		if strings.HasPrefix(dir, "egress") {
			g.c.EgressPortNames[name] = true
		}
	default:
		p["port"] = "0"
	}
	if g.chance(0.7) {
		p["protocol"] = pick(g.r, []string{"TCP", "TCP", "UDP", "SCTP", "ANY"})
	}
	return p
}

// subjectSelector returns an endpointSelector: never naming the
// namespace in a namespaced policy (see Generate).
func (g *gen) subjectSelector(clusterwide bool) map[string]any {
	ml := map[string]any{}
	switch x := g.r.Float64(); {
	case x < 0.2:
	case x < 0.7:
		ml["app"] = pick(g.r, appValues)
		if g.chance(0.3) {
			ml["tier"] = pick(g.r, tierValues)
		}
	default:
		return map[string]any{"matchExpressions": []any{g.expression(true)}}
	}
	if clusterwide && g.chance(0.4) {
		if g.chance(0.5) {
			ml["k8s:io.kubernetes.pod.namespace"] = pick(g.r, g.namespaces)
		} else {
			ml["io.cilium.k8s.namespace.labels.team"] = pick(g.r, teamValues)
		}
	}
	return map[string]any{"matchLabels": ml}
}

// expression returns a matchExpressions entry on pod labels; in Cilium
// selectors (ciliumKeys) the key may name its source.
func (g *gen) expression(ciliumKeys bool) map[string]any {
	prefix := ""
	if ciliumKeys && g.chance(0.3) {
		prefix = pick(g.r, []string{"k8s:", "any:"})
	}
	switch x := g.r.Float64(); {
	case x < 0.3:
		return map[string]any{"key": prefix + "app", "operator": "In", "values": []any{pick(g.r, appValues), pick(g.r, appValues)}}
	case x < 0.5:
		return map[string]any{"key": prefix + "app", "operator": "NotIn", "values": []any{pick(g.r, appValues)}}
	case x < 0.75:
		return map[string]any{"key": prefix + pick(g.r, []string{"tier", "version"}), "operator": "Exists"}
	default:
		return map[string]any{"key": prefix + pick(g.r, []string{"tier", "version"}), "operator": "DoesNotExist"}
	}
}

// peerSelector returns a fromEndpoints/toEndpoints selector: pod labels,
// maybe a namespace, namespace labels or a cluster.
func (g *gen) peerSelector() map[string]any {
	ml := map[string]any{}
	sel := map[string]any{}
	if g.chance(0.6) {
		ml["app"] = pick(g.r, appValues)
	}
	if g.chance(0.2) {
		sel["matchExpressions"] = []any{g.expression(true)}
	}
	switch x := g.r.Float64(); {
	case x < 0.15:
		ml["k8s:io.kubernetes.pod.namespace"] = pick(g.r, g.namespaces)
	case x < 0.25:
		ml["io.kubernetes.pod.namespace"] = pick(g.r, g.namespaces)
	case x < 0.35:
		ml["io.cilium.k8s.namespace.labels.team"] = pick(g.r, teamValues)
	case x < 0.45:
		ml["k8s:io.cilium.k8s.policy.cluster"] = pick(g.r, []string{LocalCluster, RemoteCluster})
	case x < 0.5:
		exprs, _ := sel["matchExpressions"].([]any)
		sel["matchExpressions"] = append(exprs, map[string]any{"key": "io.kubernetes.pod.namespace", "operator": "In",
			"values": []any{pick(g.r, g.namespaces), pick(g.r, g.namespaces)}})
	}
	if len(ml) > 0 {
		sel["matchLabels"] = ml
	}
	return sel
}

// networkPolicySpec returns a NetworkPolicy spec: podSelector,
// sometimes policyTypes, 0-2 ingress and egress rules.
func (g *gen) networkPolicySpec() map[string]any {
	spec := map[string]any{"podSelector": g.k8sSelector(0.3)}
	hasIngress, hasEgress := g.chance(0.7), g.chance(0.5)
	if hasIngress {
		spec["ingress"] = g.networkPolicyRules("from")
	}
	if hasEgress {
		spec["egress"] = g.networkPolicyRules("to")
	}
	if g.chance(0.4) {
		// Every direction with rules is listed: for rules of a
		// direction not in policyTypes, apiary follows Kubernetes (they
		// allow, they do not isolate), Cilium isolates the pods
		// (docs/policy.md, "Differences from Cilium").
		var types []any
		if hasIngress || !hasEgress || g.chance(0.5) {
			types = append(types, "Ingress")
		}
		if hasEgress || g.chance(0.3) {
			types = append(types, "Egress")
		}
		spec["policyTypes"] = types
	}
	return spec
}

// k8sSelector returns a Kubernetes label selector on pod labels, empty
// with probability empty.
func (g *gen) k8sSelector(empty float64) map[string]any {
	if g.chance(empty) {
		return map[string]any{}
	}
	if g.chance(0.3) {
		return map[string]any{"matchExpressions": []any{g.expression(false)}}
	}
	return map[string]any{"matchLabels": map[string]any{"app": pick(g.r, appValues)}}
}

func (g *gen) networkPolicyRules(peerKey string) []any {
	var out []any
	for range g.r.IntN(3) {
		r := map[string]any{}
		switch x := g.r.Float64(); {
		case x < 0.2:
		case x < 0.3:
			r[peerKey] = []any{}
		default:
			var peers []any
			for range 1 + g.r.IntN(2) {
				peers = append(peers, g.networkPolicyPeer())
			}
			r[peerKey] = peers
		}
		if g.chance(0.6) {
			var ports []any
			for range 1 + g.r.IntN(2) {
				ports = append(ports, g.networkPolicyPort(peerKey == "to"))
			}
			r["ports"] = ports
		}
		out = append(out, r)
	}
	return out
}

func (g *gen) networkPolicyPeer() map[string]any {
	switch x := g.r.Float64(); {
	case x < 0.35:
		return map[string]any{"podSelector": g.k8sSelector(0.2)}
	case x < 0.55:
		return map[string]any{"namespaceSelector": g.namespaceSelector()}
	case x < 0.75:
		return map[string]any{"namespaceSelector": g.namespaceSelector(), "podSelector": g.k8sSelector(0.2)}
	default:
		return map[string]any{"ipBlock": g.cidrRule("cidr")}
	}
}

func (g *gen) namespaceSelector() map[string]any {
	switch x := g.r.Float64(); {
	case x < 0.25:
		return map[string]any{}
	case x < 0.5:
		return map[string]any{"matchLabels": map[string]any{"team": pick(g.r, teamValues)}}
	case x < 0.7:
		return map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": pick(g.r, g.namespaces)}}
	default:
		return map[string]any{"matchExpressions": []any{map[string]any{"key": "env", "operator": pick(g.r, []string{"In", "NotIn"}), "values": []any{pick(g.r, envValues)}}}}
	}
}

// networkPolicyPort returns a NetworkPolicy port: protocol or none
// (TCP), a number, a range or a name, or no port (every port).
func (g *gen) networkPolicyPort(egress bool) map[string]any {
	p := map[string]any{}
	if g.chance(0.6) {
		p["protocol"] = pick(g.r, []string{"TCP", "UDP", "SCTP"})
	}
	switch x := g.r.Float64(); {
	case x < 0.45:
		p["port"] = pick(g.r, []int{80, 443, 53, 5432, 8080, 9090})
	case x < 0.6:
		lo := pick(g.r, []int{8000, 9000, 50})
		p["port"], p["endPort"] = lo, lo+pick(g.r, []int{10, 99, 100})
	case x < 0.9:
		name := pick(g.r, []string{"http", "metrics", "dns", "nosuch"})
		p["port"] = name
		if egress {
			g.c.EgressPortNames[name] = true
		}
	}
	return p
}

// query returns a connection with at least one endpoint of the local
// cluster, never from an endpoint to itself.
func (g *gen) query() simulate.Query {
	s := &g.c.Scenario
	for {
		from, fromLocal := g.side(s)
		to, toLocal := g.side(s)
		if from == to || !fromLocal && !toLocal {
			continue
		}
		q := simulate.Query{From: from, To: to, Port: pick(g.r, queryPorts)}
		switch x := g.r.Float64(); {
		case x < 0.3:
			q.Protocol = "UDP"
		case x < 0.4:
			q.Protocol = "SCTP"
		default:
			q.Protocol = "TCP"
		}
		return q
	}
}

// side returns a query side: a local endpoint, a remote one or an
// address that is no endpoint.
func (g *gen) side(s *simulate.Scenario) (ref string, local bool) {
	if g.chance(0.3) {
		return pick(g.r, externalIPs), false
	}
	ep := pick(g.r, s.Endpoints)
	if ep.Cluster == RemoteCluster {
		return RemoteCluster + "/" + ep.Namespace + "/" + ep.Name, false
	}
	return ep.Namespace + "/" + ep.Name, true
}

// NamespaceLabels returns the labels of namespace ns with
// kubernetes.io/metadata.name, as the API server sets them.
func (c *Case) NamespaceLabels(ns string) map[string]string {
	out := map[string]string{"kubernetes.io/metadata.name": ns}
	for _, n := range c.Scenario.Namespaces {
		if n.Name == ns {
			maps.Copy(out, n.Labels)
		}
	}
	return out
}
