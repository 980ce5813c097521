package policyapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// decoder walks one document decoded from JSON into generic values
// (map[string]any, []any, string, json.Number, bool, nil) and records
// every problem with the path of its field. Walking the generic tree
// instead of unmarshalling into structs gives exact paths with indices,
// catches unknown fields and lets unsupported fields say why.
type decoder struct {
	errs []*FieldError
	// warnings are accepted oddities (warnf); they do not fail the
	// document.
	warnings []*FieldError
}

// fail records a problem with the field at path.
func (d *decoder) fail(path string, err error) {
	d.errs = append(d.errs, &FieldError{Field: path, Err: err})
}

// failf records a problem described by a format.
func (d *decoder) failf(path, format string, args ...any) {
	d.fail(path, fmt.Errorf(format, args...))
}

// failed reports whether problems were recorded since mark.
func (d *decoder) failed(mark int) bool { return len(d.errs) > mark }

// field appends a field name to a path.
func field(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// index appends a list index to a path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// objectSpec lists the fields an object may have. Unsupported fields are
// known but not enforced; the value says why, for the error.
type objectSpec struct {
	fields      []string
	unsupported map[string]string
	// notEnforced are fields accepted with a warning that says what
	// apiary makes of them (a peer that selects nothing, an L7 rule of
	// which only the L4 part applies): never more than Cilium allows.
	notEnforced map[string]string
}

// object returns v as an object, recording unknown and unsupported
// fields. ok is false when v is not an object.
func (d *decoder) object(path string, v any, spec objectSpec) (m map[string]any, ok bool) {
	m, ok = v.(map[string]any)
	if !ok {
		d.failf(path, "must be an object, not %s", typeName(v))
		return nil, false
	}
	known := true
	for name := range m {
		if !slices.Contains(spec.fields, name) {
			known = false
			break
		}
	}
	if known {
		return m, true // the usual case, without sorting the keys
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if slices.Contains(spec.fields, name) {
			continue
		}
		if why, known := spec.unsupported[name]; known {
			d.fail(field(path, name), fmt.Errorf("%w: %s", ErrUnsupported, why))
			continue
		}
		if what, known := spec.notEnforced[name]; known {
			d.warnf(field(path, name), what)
			continue
		}
		d.failf(field(path, name), "unknown field")
	}
	return m, true
}

// get returns m[name]; a missing field and an explicit null are both
// absent, as in Kubernetes.
func get(m map[string]any, name string) (any, bool) {
	v, ok := m[name]
	return v, ok && v != nil
}

// list returns v as a list.
func (d *decoder) list(path string, v any) ([]any, bool) {
	l, ok := v.([]any)
	if !ok {
		d.failf(path, "must be a list, not %s", typeName(v))
	}
	return l, ok
}

// str returns v as a string.
func (d *decoder) str(path string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.failf(path, "must be a string, not %s", typeName(v))
	}
	return s, ok
}

// boolean returns v as a boolean.
func (d *decoder) boolean(path string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.failf(path, "must be true or false, not %s", typeName(v))
	}
	return b, ok
}

// integer returns v as an integer in [lo, hi].
func (d *decoder) integer(path string, v any, lo, hi int64) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		d.failf(path, "must be a number, not %s", typeName(v))
		return 0, false
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || i < lo || i > hi {
		d.failf(path, "%s is not an integer in %d..%d", n, lo, hi)
		return 0, false
	}
	return i, true
}

// stringList returns v as a list of strings.
func (d *decoder) stringList(path string, v any) ([]string, bool) {
	l, ok := d.list(path, v)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for i, e := range l {
		if s, ok := d.str(index(path, i), e); ok {
			out = append(out, s)
		}
	}
	return out, len(out) == len(l)
}

// typeName names the JSON type of v for messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
