package labels

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Labels is a set of labels sorted by key, at most one per key (as in
// Cilium, where a label set is keyed by label key).
type Labels []Label

// FromSlice builds a sorted set; for duplicate keys the last label wins.
func FromSlice(ls []Label) Labels {
	byKey := make(map[string]Label, len(ls))
	for _, l := range ls {
		byKey[l.Key] = l
	}
	out := make(Labels, 0, len(byKey))
	for _, l := range byKey {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b Label) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// FromMap builds a set of source-labels from a Kubernetes label map.
func FromMap(source string, m map[string]string) Labels {
	ls := make([]Label, 0, len(m))
	for k, v := range m {
		ls = append(ls, Label{Source: source, Key: k, Value: v})
	}
	return FromSlice(ls)
}

// ParseList parses labels like "k8s:app=web" (source defaultSource when
// absent) into a set.
func ParseList(defaultSource string, ss ...string) (Labels, error) {
	ls := make([]Label, 0, len(ss))
	for _, s := range ss {
		l, err := Parse(s, defaultSource)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return FromSlice(ls), nil
}

// MustParseList is ParseList with source "any" for literals; it panics on
// error.
func MustParseList(ss ...string) Labels {
	ls, err := ParseList(SourceAny, ss...)
	if err != nil {
		panic(err)
	}
	return ls
}

// SortedList returns the canonical form "source:key=value;..." in key
// order: the kvstore value of an identity and the key of its per-node
// references.
func (ls Labels) SortedList() string {
	var b strings.Builder
	for _, l := range ls {
		l.kvstoreForm(&b)
	}
	return b.String()
}

// ParseSortedList reads the canonical form back. The labels' strings
// are parts of s. A list in key order without repeated keys (the
// canonical form, as writers put it) becomes the set as it is, in one
// allocation of its exact size; any other list goes through FromSlice.
func ParseSortedList(s string) (Labels, error) {
	n := strings.Count(s, ";")
	if !strings.HasSuffix(s, ";") {
		n++
	}
	out := make([]Label, 0, n)
	for part := range strings.SplitSeq(s, ";") {
		if part == "" {
			continue
		}
		l, err := Parse(part, "")
		if err != nil {
			return nil, fmt.Errorf("parse label list %q: %w", s, err)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("parse label list %q: no labels", s)
	}
	if slices.IsSortedFunc(out, func(a, b Label) int { return cmp.Compare(a.Key, b.Key) }) && !repeatsKey(out) {
		return slices.Clip(Labels(out)), nil
	}
	return FromSlice(out), nil
}

// repeatsKey reports whether a list sorted by key has a key twice.
func repeatsKey(sorted []Label) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Key == sorted[i-1].Key {
			return true
		}
	}
	return false
}

// String formats the set as a comma-separated list.
func (ls Labels) String() string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	return strings.Join(parts, ",")
}

// Get returns the label with key.
func (ls Labels) Get(key string) (Label, bool) {
	i, ok := slices.BinarySearchFunc(ls, key, func(l Label, k string) int { return cmp.Compare(l.Key, k) })
	if !ok {
		return Label{}, false
	}
	return ls[i], true
}

// Has reports whether the set has a label matching sel (see Label.Matches).
func (ls Labels) Has(sel Label) bool {
	l, ok := ls.Get(sel.Key)
	return ok && sel.Matches(l)
}

// HasAll reports whether ls holds every label of want.
func (ls Labels) HasAll(want Labels) bool {
	for _, l := range want {
		if !ls.Has(l) {
			return false
		}
	}
	return true
}

// With returns a copy with l added (replacing a label with its key).
func (ls Labels) With(l ...Label) Labels {
	return FromSlice(append(slices.Clone(ls), l...))
}

// Equal reports whether two sets hold the same labels.
func (ls Labels) Equal(other Labels) bool { return slices.Equal(ls, other) }

// AllFrom reports whether the set is not empty and every label has the
// given source.
func (ls Labels) AllFrom(source string) bool {
	for _, l := range ls {
		if l.Source != source {
			return false
		}
	}
	return len(ls) > 0
}
