package scenariogen

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

// networkPolicyRules returns 0-2 rules: no peers, an empty peer list or
// 1-2 peers, maybe ports.
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

// networkPolicyPort returns a NetworkPolicy port: protocol or none
// (TCP), a number, a range or a name, or no port (every port).
func (g *gen) networkPolicyPort(egress bool) map[string]any {
	p := map[string]any{}
	if g.chance(0.6) {
		p["protocol"] = pick(g.r, []string{"TCP", "UDP", "SCTP"})
	}
	switch x := g.r.Float64(); {
	case x < 0.4:
		port := pick(g.r, rulePorts)
		p["port"] = port
		g.ports = append(g.ports, port)
	case x < 0.6:
		lo, hi := g.portRange()
		p["port"], p["endPort"] = lo, hi
	case x < 0.9:
		p["port"] = g.portName(egress)
	}
	return p
}
