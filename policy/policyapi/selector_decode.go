package policyapi

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/policy/labels"
)

// keySyntax says how the label keys of a selector in a document are read.
type keySyntax struct {
	// withSource lets keys name their source ("k8s:app", Cilium's form).
	withSource bool
	// defaultSource is the source of keys that name none: "any" in
	// Cilium selectors, "k8s" in NetworkPolicy selectors.
	defaultSource string
	// prefix is prepended to every key: namespace labels in a
	// NetworkPolicy namespaceSelector.
	prefix string
}

var (
	// ciliumKeys reads CNP/CCNP selectors: "app" is any:app.
	ciliumKeys = keySyntax{withSource: true, defaultSource: labels.SourceAny}
	// podKeys reads NetworkPolicy pod selectors: "app" is k8s:app.
	podKeys = keySyntax{defaultSource: labels.SourceK8s}
	// namespaceKeys reads NetworkPolicy namespace selectors: "team" is
	// k8s:io.cilium.k8s.namespace.labels.team.
	namespaceKeys = keySyntax{defaultSource: labels.SourceK8s, prefix: labels.PrefixNamespaceLabels + "."}
)

// selectorSources are the label sources a selector key may name.
var selectorSources = []string{
	labels.SourceAny, labels.SourceK8s, labels.SourceReserved, labels.SourceCIDR,
	labels.SourceContainer, labels.SourceUnspec,
}

var (
	selectorSpec   = objectSpec{fields: []string{"matchLabels", "matchExpressions"}}
	expressionSpec = objectSpec{fields: []string{"key", "operator", "values"}}
)

// selector decodes a Kubernetes label selector (matchLabels and
// matchExpressions) with keys read by syn; ok is false if any part of it
// is invalid.
func (d *decoder) selector(path string, v any, syn keySyntax) (sel EndpointSelector, ok bool) {
	mark := len(d.errs)
	m, ok := d.object(path, v, selectorSpec)
	if !ok {
		return EndpointSelector{}, false
	}
	var reqs []Requirement
	if ml, ok := get(m, "matchLabels"); ok {
		reqs = append(reqs, d.matchLabels(field(path, "matchLabels"), ml, syn)...)
	}
	if me, ok := get(m, "matchExpressions"); ok {
		reqs = append(reqs, d.matchExpressions(field(path, "matchExpressions"), me, syn)...)
	}
	return NewSelector(reqs...), !d.failed(mark)
}

func (d *decoder) matchLabels(path string, v any, syn keySyntax) []Requirement {
	m, ok := v.(map[string]any)
	if !ok {
		d.failf(path, "must be an object, not %s", typeName(v))
		return nil
	}
	var reqs []Requirement
	for _, raw := range slices.Sorted(maps.Keys(m)) {
		value, ok := m[raw].(string)
		if !ok {
			d.failf(path, "value of %q must be a string, not %s", raw, typeName(m[raw]))
			continue
		}
		source, key, msg := parseSelectorKey(raw, syn)
		if msg != "" {
			d.failf(path, "key %q: %s", raw, msg)
			continue
		}
		if msg := checkLabelValue(value); msg != "" {
			d.failf(path, "value %q of key %q: %s", value, raw, msg)
			continue
		}
		reqs = append(reqs, Requirement{Source: source, Key: key, Operator: OpIn, Values: []string{value}})
	}
	return reqs
}

func (d *decoder) matchExpressions(path string, v any, syn keySyntax) []Requirement {
	items, ok := d.list(path, v)
	if !ok {
		return nil
	}
	var reqs []Requirement
	for i, item := range items {
		if r, ok := d.expression(index(path, i), item, syn); ok {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

func (d *decoder) expression(path string, v any, syn keySyntax) (Requirement, bool) {
	mark := len(d.errs)
	m, ok := d.object(path, v, expressionSpec)
	if !ok {
		return Requirement{}, false
	}
	var r Requirement
	if raw, ok := d.requiredString(m, path, "key"); ok {
		var msg string
		if r.Source, r.Key, msg = parseSelectorKey(raw, syn); msg != "" {
			d.failf(field(path, "key"), "%q: %s", raw, msg)
		}
	}
	if op, ok := d.requiredString(m, path, "operator"); ok {
		r.Operator = Operator(op)
		if !slices.Contains([]Operator{OpIn, OpNotIn, OpExists, OpDoesNotExist}, r.Operator) {
			d.failf(field(path, "operator"), "%q is not In, NotIn, Exists or DoesNotExist", op)
		}
	}
	if vs, ok := get(m, "values"); ok {
		r.Values, _ = d.stringList(field(path, "values"), vs)
	}
	d.checkExpressionValues(path, r)
	return r, !d.failed(mark)
}

func (d *decoder) checkExpressionValues(path string, r Requirement) {
	switch r.Operator {
	case OpIn, OpNotIn:
		if len(r.Values) == 0 {
			d.failf(field(path, "values"), "must not be empty for operator %s", r.Operator)
		}
	case OpExists, OpDoesNotExist:
		if len(r.Values) > 0 {
			d.failf(field(path, "values"), "must be empty for operator %s", r.Operator)
		}
	}
	for i, v := range r.Values {
		if msg := checkLabelValue(v); msg != "" {
			d.failf(index(field(path, "values"), i), "%q: %s", v, msg)
		}
	}
}

// requiredString returns the string field name of m, recording an error
// when it is missing or not a string.
func (d *decoder) requiredString(m map[string]any, path, name string) (string, bool) {
	v, ok := get(m, name)
	if !ok {
		d.failf(field(path, name), "required")
		return "", false
	}
	return d.str(field(path, name), v)
}

// parseSelectorKey splits a selector key into source and key and checks
// it; msg says what is wrong. Reserved keys must name a reserved identity
// and cidr keys a prefix (returned in canonical form); other keys must be
// Kubernetes label keys.
func parseSelectorKey(raw string, syn keySyntax) (source, key, msg string) {
	source, key = syn.defaultSource, raw
	if i := strings.IndexByte(raw, ':'); syn.withSource && i >= 0 {
		source, key = raw[:i], raw[i+1:]
		if !slices.Contains(selectorSources, source) {
			return "", "", fmt.Sprintf("unknown label source %q (want one of %s)", source, strings.Join(selectorSources, ", "))
		}
	}
	switch source {
	case labels.SourceReserved:
		if !slices.Contains(reservedNames, key) {
			return "", "", fmt.Sprintf("%q is not a reserved identity (want one of %s)", key, strings.Join(reservedNames, ", "))
		}
		return source, key, ""
	case labels.SourceCIDR:
		p, err := labels.ParseCIDRKey(key)
		if err != nil {
			return "", "", err.Error()
		}
		return source, labels.CIDRKey(p), ""
	}
	if m := checkQualifiedName(key); m != "" {
		return "", "", m
	}
	return source, syn.prefix + key, ""
}
