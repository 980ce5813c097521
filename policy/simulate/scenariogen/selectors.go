package scenariogen

// subjectSelector returns an endpointSelector: never naming the
// namespace in a namespaced policy (see the package doc).
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

// entities returns 1-2 entities. Not world-ipv4 and world-ipv6: apiary
// labels every CIDR identity reserved:world, as Cilium does with one IP
// family enabled, so they select no address; Cilium with both families
// labels them world-ipv4 or world-ipv6 (docs/policy.md, "Differences
// from Cilium").
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

// namespaceSelector returns a NetworkPolicy namespaceSelector.
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
