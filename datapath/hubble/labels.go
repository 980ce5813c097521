package hubble

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
)

// requirement is one term of a label selector: [!][source:]key[=|!=value].
type requirement struct {
	source, key, value string
	hasValue, negate   bool
}

// parseSelector reads a comma-separated label selector in the subset of
// Kubernetes' syntax Hubble users write: "k8s:app=web", "app=web,tier",
// "!canary", "env!=prod"; a source prefix (k8s:, reserved:, ...) is
// optional ("any:" matches every source).
func parseSelector(s string) ([]requirement, error) {
	var out []requirement
	for _, term := range strings.Split(s, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			return nil, fmt.Errorf("%q: empty term", s)
		}
		var r requirement
		if rest, ok := strings.CutPrefix(term, "!"); ok {
			r.negate, term = true, rest
		}
		if k, v, ok := strings.Cut(term, "!="); ok {
			r.negate, r.hasValue, term, r.value = !r.negate, true, k, v
		} else if k, v, ok := strings.Cut(term, "="); ok {
			r.hasValue, term, r.value = true, strings.TrimPrefix(k, "="), strings.TrimPrefix(v, "=")
		}
		if src, key, ok := strings.Cut(term, ":"); ok {
			r.source, term = src, key
		}
		if term == "" {
			return nil, fmt.Errorf("%q: a term has no key", s)
		}
		r.key = term
		if r.source == "any" {
			r.source = ""
		}
		out = append(out, r)
	}
	return out, nil
}

// matches reports whether labels ("source:key=value" strings) satisfy r.
func (r requirement) matches(lbls []string) bool {
	found := slices.ContainsFunc(lbls, func(l string) bool {
		src, kv, _ := strings.Cut(l, ":")
		k, v, _ := strings.Cut(kv, "=")
		return k == r.key && (r.source == "" || r.source == src) && (!r.hasValue || v == r.value)
	})
	return found != r.negate
}

// labelMatch matches endpoints whose labels satisfy one of the selectors.
func labelMatch(field string, vals []string, get func(*flow.Flow) *flow.Endpoint) (match, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	var sels [][]requirement
	for _, v := range vals {
		sel, err := parseSelector(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		sels = append(sels, sel)
	}
	return func(f *flow.Flow) bool {
		lbls := get(f).GetLabels()
		return slices.ContainsFunc(sels, func(sel []requirement) bool {
			for _, r := range sel {
				if !r.matches(lbls) {
					return false
				}
			}
			return true
		})
	}, nil
}
