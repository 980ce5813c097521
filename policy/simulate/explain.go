package simulate

import (
	"slices"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/api"
	"github.com/apiary-net/apiary/policy/labels"
)

// explain evaluates rules for the endpoint with labels subject and named
// ports named, in direction dir, for traffic with a peer with labels
// peer: the first deny rule covering the traffic decides; otherwise the
// first allow rule covering it; otherwise default deny if any rule
// selecting the subject puts it in default deny in dir; otherwise the
// traffic is allowed by default. It returns the reason and whether the
// traffic is allowed, which the caller checks against the engine.
func explain(rules []*api.Rule, subject labels.Labels, named []api.NamedPort, peer labels.Labels, dir policy.Direction, pkt packet) (reason string, allowed bool) {
	defaultDeny := false
	var allowedBy string
	for _, r := range rules {
		if !r.Subject.Selects(subject) {
			continue
		}
		allow, deny, dd := r.Ingress, r.IngressDeny, r.DefaultDeny.Ingress
		if dir == policy.Egress {
			allow, deny, dd = r.Egress, r.EgressDeny, r.DefaultDeny.Egress
		}
		defaultDeny = defaultDeny || dd
		if i := slices.IndexFunc(deny, func(pr api.PeerRule) bool { return covers(pr, named, peer, pkt) }); i >= 0 {
			return "denied by " + ruleName(r, deny[i]), false
		}
		if i := slices.IndexFunc(allow, func(pr api.PeerRule) bool { return covers(pr, named, peer, pkt) }); i >= 0 && allowedBy == "" {
			allowedBy = "allowed by " + ruleName(r, allow[i])
		}
	}
	switch {
	case allowedBy != "":
		return allowedBy, true
	case defaultDeny:
		return ReasonDefaultDeny, false
	}
	return ReasonNoPolicy, true
}

// covers reports whether a peer rule covers traffic with peer: one of
// its peers selects the peer's labels and one of its ports (resolved
// against the subject's named ports) covers the packet; a rule without
// ports or ICMP types covers every port.
func covers(pr api.PeerRule, named []api.NamedPort, peer labels.Labels, pkt packet) bool {
	if !slices.ContainsFunc(pr.Peers, func(p api.Peer) bool {
		return p.Kind == api.PeerAny || (p.Selector != nil && p.Selector.IsWildcard()) || p.Matches(peer)
	}) {
		return false
	}
	if pr.IsL3Only() {
		return true
	}
	for _, pp := range pr.Ports {
		for _, resolved := range pp.Resolve(named) {
			if resolved.Covers(pkt.port, pkt.proto) {
				return true
			}
		}
	}
	return false
}

// ruleName names a rule by its origin ("CiliumNetworkPolicy
// default/l4-policy") and the peer rule's field ("spec.ingress[0]").
func ruleName(r *api.Rule, pr api.PeerRule) string {
	name := label(r.Labels, api.LabelPolicyName)
	if ns := label(r.Labels, api.LabelPolicyNamespace); ns != "" {
		name = ns + "/" + name
	}
	if kind := label(r.Labels, api.LabelPolicyDerivedFrom); kind != "" {
		name = kind + " " + name
	}
	field := pr.Field
	if r.Field != "" {
		field = r.Field + "." + field
	}
	return name + " " + field
}

func label(ls labels.Labels, key string) string {
	l, _ := ls.Get(key)
	return l.Value
}
