package scenariogen

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// policy returns policy i as a YAML document: a NetworkPolicy, a
// CiliumNetworkPolicy or a CiliumClusterwideNetworkPolicy.
func (g *gen) policy(i int) string {
	name := fmt.Sprintf("pol-%d", i)
	var obj map[string]any
	switch x := g.r.Float64(); {
	case x < 0.35:
		obj = map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
			"metadata": map[string]any{"name": name, "namespace": pick(g.r, g.namespaces)}, "spec": g.networkPolicySpec()}
	case x < 0.85:
		obj = map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
			"metadata": map[string]any{"name": name, "namespace": pick(g.r, g.namespaces)}}
		g.ciliumSpecs(obj, false)
	default:
		obj = map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
			"metadata": map[string]any{"name": name}}
		g.ciliumSpecs(obj, true)
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("marshal generated policy: %v", err)) // plain maps always marshal
	}
	return string(out)
}

// ciliumSpecs sets the spec of obj, or two specs.
func (g *gen) ciliumSpecs(obj map[string]any, clusterwide bool) {
	if g.chance(0.8) {
		obj["spec"] = g.ciliumRule(clusterwide)
		return
	}
	obj["specs"] = []any{g.ciliumRule(clusterwide), g.ciliumRule(clusterwide)}
}

// ciliumRule returns a rule with some of ingress, ingressDeny, egress
// and egressDeny (denies sometimes overlapping allows), sometimes with
// enableDefaultDeny.
func (g *gen) ciliumRule(clusterwide bool) map[string]any {
	r := map[string]any{"endpointSelector": g.subjectSelector(clusterwide)}
	dirs := []string{"ingress", "ingressDeny", "egress", "egressDeny"}
	for i, dir := range dirs {
		if g.chance([]float64{0.6, 0.3, 0.5, 0.25}[i]) {
			r[dir] = g.ciliumPeerRules(dir)
		}
	}
	if len(r) == 1 {
		dir := pick(g.r, dirs)
		r[dir] = g.ciliumPeerRules(dir)
	}
	for _, dir := range []string{"ingress", "egress"} {
		if allows, ok := r[dir].([]any); ok && g.chance(0.4) {
			denies, _ := r[dir+"Deny"].([]any)
			r[dir+"Deny"] = append(denies, g.overlappingDeny(pick(g.r, allows).(map[string]any)))
		}
	}
	if g.chance(0.2) {
		dd := map[string]any{}
		for _, dir := range []string{"ingress", "egress"} {
			if g.chance(0.7) {
				// true without entries only when Divergent: apiary turns
				// default deny on without entries, Cilium only where
				// the rule has some (docs/policy.md, "Differences from
				// Cilium").
				_, allow := r[dir]
				_, deny := r[dir+"Deny"]
				dd[dir] = (allow || deny || g.opts.Divergent) && g.chance(0.4)
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

// overlappingDeny returns a deny rule for the peers of
// the allow rule allow, over all its ports or types, or a range or
// protocol that covers some of them: the allow keys it covers must
// still deny.
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

// ciliumPeerRule returns one rule of direction dir: at most one peer
// kind, maybe icmps or toPorts.
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
	if g.opts.ICMP && g.chance(0.15) {
		r["icmps"] = []any{map[string]any{"fields": g.icmpFields()}}
		return r
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

// ciliumPort returns a toPorts port: a number, a range, a name (any
// case) or "0", with a protocol or none (ANY).
func (g *gen) ciliumPort(dir string) map[string]any {
	p := map[string]any{}
	switch x := g.r.Float64(); {
	case x < 0.4:
		port := pick(g.r, rulePorts)
		p["port"] = fmt.Sprint(port)
		g.ports = append(g.ports, port)
	case x < 0.6:
		lo, hi := g.portRange()
		p["port"], p["endPort"] = fmt.Sprint(lo), hi
	case x < 0.9:
		p["port"] = g.portName(strings.HasPrefix(dir, "egress"))
		if g.chance(0.1) {
			p["port"] = strings.ToUpper(p["port"].(string)) // names are case-insensitive
		}
	default:
		p["port"] = "0"
	}
	if g.chance(0.7) {
		p["protocol"] = pick(g.r, []string{"TCP", "TCP", "UDP", "SCTP", "ANY"})
	}
	return p
}

// portName returns a port name for a rule, noting those of egress rules.
func (g *gen) portName(egress bool) string {
	name := pick(g.r, portNames)
	if egress {
		g.c.EgressPortNames[name] = true
	}
	return name
}

// portRange returns a range whose edges are not powers of two apart, so
// that it takes several prefixes, and notes its edges for queries.
func (g *gen) portRange() (lo, hi int) {
	lo = pick(g.r, rangeLows)
	hi = lo + pick(g.r, rangeSizes)
	g.ports = append(g.ports, lo-1, lo, lo+1, (lo+hi)/2, hi-1, hi, hi+1)
	return lo, hi
}

// icmpFields returns the fields of an icmps entry: one or two types of
// either family (the family left out means IPv4).
func (g *gen) icmpFields() []any {
	var fields []any
	for range 1 + g.r.IntN(2) {
		family := pick(g.r, []string{"IPv4", "IPv6"})
		types := icmpTypes[family]
		if family == "IPv4" && g.opts.Divergent {
			types = append(slices.Clip(types), icmpTypeZero...)
		}
		f := map[string]any{"type": pick(g.r, types)}
		if family == "IPv6" || g.chance(0.5) {
			f["family"] = family
		}
		fields = append(fields, f)
	}
	return fields
}
