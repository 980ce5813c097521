package simulate

import (
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// explain evaluates rules for the endpoint subject in direction dir, for
// traffic with peer (policy.Evaluate: port names in ingress rules
// resolve against the subject's own ports, in egress rules against the
// peer identity's), and returns the reason (the deciding rule, or the
// first rule isolating the subject) and whether the traffic is allowed,
// which the caller checks against the engine.
func explain(rules []*policyapi.Rule, subject, peer policy.Side, dir policy.Direction, pkt packet) (reason string, allowed bool) {
	v := policy.Evaluate(rules, subject, peer, dir, pkt.port, pkt.proto)
	switch {
	case v.Entry != nil && !v.Allowed:
		return "denied by " + ruleName(v.Rule, *v.Entry), false
	case v.Entry != nil:
		return "allowed by " + ruleName(v.Rule, *v.Entry), true
	case v.Isolating != nil:
		isolatedBy := policyName(v.Isolating)
		if v.Isolating.Field != "" {
			isolatedBy += " " + v.Isolating.Field
		}
		return ReasonDefaultDeny + " (isolated by " + isolatedBy + ", no rule allows it)", false
	}
	return ReasonNoPolicy, true
}

// ruleName names a rule by its origin ("CiliumNetworkPolicy
// default/l4-policy") and the peer rule's field ("spec.ingress[0]").
func ruleName(r *policyapi.Rule, pr policyapi.PeerRule) string {
	field := pr.Field
	if r.Field != "" {
		field = r.Field + "." + field
	}
	return policyName(r) + " " + field
}

// policyName names a rule's policy: "CiliumNetworkPolicy default/l4-policy".
func policyName(r *policyapi.Rule) string {
	name := label(r.Labels, policyapi.LabelPolicyName)
	if ns := label(r.Labels, policyapi.LabelPolicyNamespace); ns != "" {
		name = ns + "/" + name
	}
	if kind := label(r.Labels, policyapi.LabelPolicyDerivedFrom); kind != "" {
		name = kind + " " + name
	}
	return name
}

func label(ls labels.Labels, key string) string {
	l, _ := ls.Get(key)
	return l.Value
}
