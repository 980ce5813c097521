package policyapi

import (
	"context"
	"errors"
	"fmt"
)

// ParseDocuments parses every policy in data, a file of YAML documents
// separated by "---" lines or a JSON document, named name in errors. A
// document is a NetworkPolicy (networking.k8s.io/v1), a
// CiliumNetworkPolicy or CiliumClusterwideNetworkPolicy (cilium.io/v2), or
// a List of them (v1 List, or the kind's own List). Kinds may be mixed;
// empty documents are skipped.
//
// Every document is decoded strictly, validated, translated and checked
// for duplicates (the same kind, namespace and name twice). The result is
// all or nothing: on any problem ParseDocuments returns no policy and an
// error joining one *DocumentError per rejected document, each listing
// every problem found in it.
//
// The input and each document are bounded by opts.Limits: a document
// that decodes to more is refused with ErrTooLarge while it is decoded,
// and an input over the limit is refused whole (a plain error wrapping
// ErrTooLarge).
func ParseDocuments(name string, data []byte, opts Options) ([]*Policy, error) {
	return ParseDocumentsContext(context.Background(), name, data, opts)
}

// ParseDocumentsContext is ParseDocuments stopped by ctx: when ctx ends
// (the client of a request went away, the agent stops), the parse stops
// between documents or within a large one and returns an error wrapping
// ctx's.
func ParseDocumentsContext(ctx context.Context, name string, data []byte, opts Options) ([]*Policy, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("parse %s: options: %w", name, err)
	}
	limits := opts.Limits.orDefaults()
	if int64(len(data)) > limits.MaxInputSize {
		return nil, fmt.Errorf("parse %s: %w", name, limits.InputTooLarge(int64(len(data))))
	}
	var (
		policies []*Policy
		errs     []error
		seen     = make(map[string]*Policy)
		n        = 0
		budget   = newSizeBudget(ctx, limits)
	)
	for _, doc := range splitYAML(data) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		budget.startDocument()
		v, err := decodeYAML(doc, budget)
		if err == nil && v == nil {
			continue
		}
		n++
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, fmt.Errorf("parse %s: %w", name, ctxErr)
			}
			errs = append(errs, &DocumentError{File: name, Document: n, Item: -1, Errs: []*FieldError{{Err: err}}})
			if budget.inputExceeded() {
				break // the rest is not even decoded
			}
			continue
		}
		ps, docErrs := parseDecoded(name, n, v, opts, seen)
		errs = append(errs, docErrs...)
		policies = append(policies, ps...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return policies, nil
}

// ParseValueContext is ParseDocumentsContext for one document already
// decoded into the values Kubernetes' unstructured objects hold
// (map[string]any, []any, string, bool, nil, int64, float64): a
// watcher's object, parsed without writing it out as JSON and reading
// that back, and without copying it (v is only read, never changed). It validates, translates and reports exactly as
// ParseDocumentsContext does for the JSON encoding/json writes for v
// (document 1 of name), and counts the size of that JSON against
// opts.Limits, with one difference: strings are taken as they are, where
// that JSON read as YAML refuses a document with a C1 control character
// (U+007F to U+009F but U+0085) or U+FFFE/U+FFFF in any string and folds
// U+0085 into a space.
func ParseValueContext(ctx context.Context, name string, v any, opts Options) ([]*Policy, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("parse %s: options: %w", name, err)
	}
	budget := newSizeBudget(ctx, opts.Limits)
	budget.startDocument()
	v, _, err := budget.share(v)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("parse %s: %w", name, ctxErr)
		}
		if !errors.Is(err, ErrTooLarge) {
			err = fmt.Errorf("invalid value: %w", err)
		}
		return nil, &DocumentError{File: name, Document: 1, Item: -1, Errs: []*FieldError{{Err: err}}}
	}
	if v == nil {
		return nil, nil
	}
	ps, errs := parseDecoded(name, 1, v, opts, make(map[string]*Policy))
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ps, nil
}

// parseDecoded parses decoded document n and checks its policies for
// duplicates of those in seen, recording them there.
func parseDecoded(name string, n int, v any, opts Options, seen map[string]*Policy) ([]*Policy, []error) {
	ps, err := parseDocument(name, n, v, opts)
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	for i, p := range ps {
		if err := checkDuplicate(seen, p, name, n, i, len(ps) > 1 || isList(v)); err != nil {
			errs = append(errs, err)
		}
	}
	return ps, errs
}

// checkDuplicate records p in seen and rejects a second policy with the
// same kind, namespace and name.
func checkDuplicate(seen map[string]*Policy, p *Policy, file string, doc, item int, inList bool) error {
	id := p.String()
	first, dup := seen[id]
	if !dup {
		seen[id] = p
		return nil
	}
	if !inList {
		item = -1
	}
	return &DocumentError{
		File: file, Document: doc, Item: item, Kind: p.Kind, Namespace: p.Namespace, Name: p.Name,
		Errs: []*FieldError{{Field: "metadata.name", Err: fmt.Errorf("duplicate: %s is also defined in %s", p, first.Source)}},
	}
}

// parseDocument parses one decoded document: a policy or a List.
func parseDocument(file string, doc int, v any, opts Options) ([]*Policy, error) {
	if !isList(v) {
		p, err := parseObject(file, doc, -1, v, "", opts)
		if err != nil {
			return nil, err
		}
		return []*Policy{p}, nil
	}
	items, itemKind, err := listItems(file, doc, v.(map[string]any))
	if err != nil {
		return nil, err
	}
	var (
		policies []*Policy
		errs     []error
	)
	for i, item := range items {
		p, err := parseObject(file, doc, i, item, itemKind, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		policies = append(policies, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return policies, nil
}

// parseObject parses one policy object; item is its index in a List, or
// -1, and want the kind a typed List requires, or "".
func parseObject(file string, doc, item int, v any, want Kind, opts Options) (*Policy, error) {
	d := &decoder{}
	meta, m := d.header(v, opts)
	if want != "" && meta.kind != "" && meta.kind != want {
		d.failf("kind", "must be %s in a %sList", want, want)
	}
	var rules []*Rule
	if m != nil {
		switch meta.kind {
		case KindNetworkPolicy:
			d.object("", m, networkPolicySpec)
			rules = d.networkPolicyRules(m, meta, opts)
		case KindCiliumNetworkPolicy, KindCiliumClusterwideNetworkPolicy:
			d.object("", m, ciliumPolicySpec)
			rules = d.ciliumRules(m, meta, opts)
		}
	}
	if len(d.errs) > 0 {
		return nil, &DocumentError{
			File: file, Document: doc, Item: item,
			Kind: meta.kind, Namespace: meta.namespace, Name: meta.name, Errs: d.errs,
		}
	}
	source := fmt.Sprintf("%s: document %d", file, doc)
	if item >= 0 {
		source += fmt.Sprintf(" items[%d]", item)
	}
	where := &DocumentError{File: file, Document: doc, Item: item, Kind: meta.kind, Namespace: meta.namespace, Name: meta.name}
	return &Policy{
		Kind: meta.kind, Namespace: meta.namespace, Name: meta.name, UID: meta.uid, Source: source,
		Labels:   originLabels(meta.kind, meta.namespace, meta.name, meta.uid),
		Rules:    rules,
		Warnings: d.documentWarnings(where),
	}, nil
}
