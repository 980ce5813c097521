package policyapi

import (
	"slices"

	"github.com/apiary-net/apiary/policy/labels"
)

// ciliumPolicySpec is the top level of a CNP or CCNP document.
// A top-level description is accepted with a warning (ciliumRules):
// Cilium's own examples put it there.
var ciliumPolicySpec = objectSpec{fields: []string{"apiVersion", "kind", "metadata", "spec", "specs", "status", "description"}}

// ciliumRuleSpec lists the fields of a Cilium rule (spec, specs[i]).
var ciliumRuleSpec = objectSpec{
	fields: []string{
		"endpointSelector", "nodeSelector", "ingress", "ingressDeny", "egress", "egressDeny",
		"enableDefaultDeny", "labels", "description",
	},
	unsupported: map[string]string{
		"log": "policy verdict logging is not implemented",
	},
}

var (
	defaultDenySpec = objectSpec{fields: []string{"ingress", "egress"}}
	ruleLabelSpec   = objectSpec{fields: []string{"key", "value", "source"}}
)

// ciliumRules translates the spec and specs of a CiliumNetworkPolicy or
// CiliumClusterwideNetworkPolicy.
func (d *decoder) ciliumRules(m map[string]any, meta objectMeta, opts Options) []*Rule {
	sc := newScope(opts, meta.namespace)
	origin := originLabels(meta.kind, meta.namespace, meta.name, meta.uid)
	var rules []*Rule
	spec, hasSpec := get(m, "spec")
	if hasSpec {
		rules = append(rules, d.ciliumRule("spec", spec, meta.kind, sc, origin))
	}
	specs, hasSpecs := get(m, "specs")
	if hasSpecs {
		if items, ok := d.list("specs", specs); ok {
			for i, item := range items {
				rules = append(rules, d.ciliumRule(index("specs", i), item, meta.kind, sc, origin))
			}
		}
	}
	if !hasSpec && !hasSpecs {
		d.failf("", "one of spec or specs is required")
	}
	d.topLevelDescription(m, rules)
	return rules
}

// topLevelDescription accepts a description beside spec, where Cilium's
// Star Wars demo and getting-started policies put it (the API server
// drops it there, with a warning): it becomes the description of the
// rules that have none, and a warning says where it belongs.
func (d *decoder) topLevelDescription(m map[string]any, rules []*Rule) {
	v, ok := get(m, "description")
	if !ok {
		return
	}
	desc, ok := d.str("description", v)
	if !ok {
		return
	}
	d.warnf("description", "belongs in spec.description (Kubernetes drops it here); taken as the description of the policy's rules")
	for _, r := range rules {
		if r.Description == "" {
			r.Description = desc
		}
	}
}

// ciliumRule translates one rule; the rule is only meaningful when no
// problem was recorded.
func (d *decoder) ciliumRule(path string, v any, kind Kind, sc scope, origin labels.Labels) *Rule {
	r := &Rule{Field: path, Labels: origin}
	m, ok := d.object(path, v, ciliumRuleSpec)
	if !ok {
		return r
	}
	r.Subject = d.ciliumSubject(path, m, kind, sc)
	isInit := r.Subject.Selector.hasKey("init", labels.SourceReserved)
	for _, dir := range ciliumDirections {
		*dir.entries(r) = d.ciliumEntries(path, m, dir, sc, isInit)
	}
	r.DefaultDeny = DefaultDeny{
		Ingress: len(r.Ingress)+len(r.IngressDeny) > 0,
		Egress:  len(r.Egress)+len(r.EgressDeny) > 0,
	}
	d.enableDefaultDeny(path, m, &r.DefaultDeny)
	r.Labels = d.ruleLabels(field(path, "labels"), m, origin)
	if desc, ok := get(m, "description"); ok {
		r.Description, _ = d.str(field(path, "description"), desc)
	}
	return r
}

// ciliumSubject reads endpointSelector or (clusterwide only) nodeSelector.
func (d *decoder) ciliumSubject(path string, m map[string]any, kind Kind, sc scope) Subject {
	es, hasES := get(m, "endpointSelector")
	ns, hasNS := get(m, "nodeSelector")
	switch {
	case hasES && hasNS:
		d.failf(field(path, "nodeSelector"), "must not be set together with endpointSelector")
	case hasNS && kind.IsNamespaced():
		d.failf(field(path, "nodeSelector"), "only a CiliumClusterwideNetworkPolicy may select nodes")
	case hasNS:
		sel, _ := d.selector(field(path, "nodeSelector"), ns, ciliumKeys)
		return Subject{Kind: SubjectNodes, Selector: sel}
	case hasES:
		sel, ok := d.selector(field(path, "endpointSelector"), es, ciliumKeys)
		if !ok {
			return Subject{Kind: SubjectEndpoints}
		}
		sel, err := sc.subject(sel)
		if err != nil {
			d.fail(field(path, "endpointSelector"), err)
		}
		return Subject{Kind: SubjectEndpoints, Selector: sel}
	default:
		d.failf(path, "one of endpointSelector or nodeSelector is required")
	}
	return Subject{Kind: SubjectEndpoints}
}

// enableDefaultDeny applies spec.enableDefaultDeny over the defaults.
func (d *decoder) enableDefaultDeny(path string, m map[string]any, dd *DefaultDeny) {
	v, ok := get(m, "enableDefaultDeny")
	if !ok {
		return
	}
	path = field(path, "enableDefaultDeny")
	edd, ok := d.object(path, v, defaultDenySpec)
	if !ok {
		return
	}
	if in, ok := get(edd, "ingress"); ok {
		if b, ok := d.boolean(field(path, "ingress"), in); ok {
			dd.Ingress = b
		}
	}
	if eg, ok := get(edd, "egress"); ok {
		if b, ok := d.boolean(field(path, "egress"), eg); ok {
			dd.Egress = b
		}
	}
}

// ruleLabels returns a copy of the origin labels plus the rule's
// spec.labels ({key, value, source}; source "unspec" by default).
func (d *decoder) ruleLabels(path string, m map[string]any, origin labels.Labels) labels.Labels {
	var out []labels.Label
	v, ok := get(m, "labels")
	if !ok {
		return origin.With()
	}
	items, _ := d.list(path, v)
	for i, item := range items {
		if l, ok := d.ruleLabel(index(path, i), item); ok {
			out = append(out, l)
		}
	}
	return origin.With(out...)
}

var originKeys = []string{LabelPolicyName, LabelPolicyNamespace, LabelPolicyUID, LabelPolicyDerivedFrom}

func (d *decoder) ruleLabel(path string, v any) (labels.Label, bool) {
	mark := len(d.errs)
	m, ok := d.object(path, v, ruleLabelSpec)
	if !ok {
		return labels.Label{}, false
	}
	l := labels.Label{Source: labels.SourceUnspec}
	if key, ok := d.requiredString(m, path, "key"); ok {
		l.Key = key
		if msg := checkQualifiedName(key); msg != "" {
			d.failf(field(path, "key"), "%q: %s", key, msg)
		} else if slices.Contains(originKeys, key) {
			d.failf(field(path, "key"), "%q is set from the policy's metadata", key)
		}
	}
	if v, ok := get(m, "value"); ok {
		if l.Value, ok = d.str(field(path, "value"), v); ok {
			if msg := checkLabelValue(l.Value); msg != "" {
				d.failf(field(path, "value"), "%q: %s", l.Value, msg)
			}
		}
	}
	if v, ok := get(m, "source"); ok {
		if s, ok := d.str(field(path, "source"), v); ok && s != "" {
			l.Source = s
		}
	}
	return l, !d.failed(mark)
}
