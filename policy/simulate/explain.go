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
// traffic is allowed by default. A default deny names the first rule
// that isolates the subject. It returns the reason and whether the
// traffic is allowed, which the caller checks against the engine.
func explain(rules []*api.Rule, subject labels.Labels, named []api.NamedPort, peer labels.Labels, dir policy.Direction, pkt packet) (reason string, allowed bool) {
	var allowedBy, isolatedBy string
	for _, r := range rules {
		if !r.Subject.Selects(subject) {
			continue
		}
		allow, deny, dd := r.Ingress, r.IngressDeny, r.DefaultDeny.Ingress
		if dir == policy.Egress {
			allow, deny, dd = r.Egress, r.EgressDeny, r.DefaultDeny.Egress
		}
		if dd && isolatedBy == "" {
			isolatedBy = policyName(r)
			if r.Field != "" {
				isolatedBy += " " + r.Field
			}
		}
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
	case isolatedBy != "":
		return ReasonDefaultDeny + " (isolated by " + isolatedBy + ", no rule allows it)", false
	}
	return ReasonNoPolicy, true
}

// covers reports whether a peer rule covers traffic with peer; see
// policy.Covers.
func covers(pr api.PeerRule, named []api.NamedPort, peer labels.Labels, pkt packet) bool {
	return policy.Covers(pr, named, peer, pkt.port, pkt.proto)
}

// ruleName names a rule by its origin ("CiliumNetworkPolicy
// default/l4-policy") and the peer rule's field ("spec.ingress[0]").
func ruleName(r *api.Rule, pr api.PeerRule) string {
	field := pr.Field
	if r.Field != "" {
		field = r.Field + "." + field
	}
	return policyName(r) + " " + field
}

// policyName names a rule's policy: "CiliumNetworkPolicy default/l4-policy".
func policyName(r *api.Rule) string {
	name := label(r.Labels, api.LabelPolicyName)
	if ns := label(r.Labels, api.LabelPolicyNamespace); ns != "" {
		name = ns + "/" + name
	}
	if kind := label(r.Labels, api.LabelPolicyDerivedFrom); kind != "" {
		name = kind + " " + name
	}
	return name
}

func label(ls labels.Labels, key string) string {
	l, _ := ls.Get(key)
	return l.Value
}
