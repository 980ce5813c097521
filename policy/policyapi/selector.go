package policyapi

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/policy/labels"
)

// Operator is the relation a Requirement checks, as in Kubernetes label
// selectors.
type Operator string

// Operators.
const (
	// OpIn: the label is present with one of the values.
	OpIn Operator = "In"
	// OpNotIn: the label is absent or has none of the values.
	OpNotIn Operator = "NotIn"
	// OpExists: the label is present, with any value.
	OpExists Operator = "Exists"
	// OpDoesNotExist: the label is absent.
	OpDoesNotExist Operator = "DoesNotExist"
)

// Requirement is one condition on one label of an identity.
type Requirement struct {
	// Source is the source the label must come from; labels.SourceAny
	// accepts a label with Key from any source.
	Source string
	// Key is the label key, without source.
	Key string
	// Operator is the relation checked.
	Operator Operator
	// Values are the values of In and NotIn, sorted, without duplicates.
	Values []string
}

// Matches reports whether ls, a sorted label set, satisfies r.
func (r Requirement) Matches(ls labels.Labels) bool {
	l, ok := ls.Get(r.Key)
	present := ok && (r.Source == labels.SourceAny || r.Source == l.Source)
	switch r.Operator {
	case OpIn:
		return present && slices.Contains(r.Values, l.Value)
	case OpNotIn:
		return !present || !slices.Contains(r.Values, l.Value)
	case OpExists:
		return present
	case OpDoesNotExist:
		return !present
	}
	return false
}

// String formats r in Kubernetes' selector syntax with Cilium's keys:
// "k8s:app=web", "any:tier in (a,b)", "k8s:x notin (a)", "k8s:x" (Exists),
// "!k8s:x" (DoesNotExist).
func (r Requirement) String() string {
	key := r.Source + ":" + r.Key
	switch r.Operator {
	case OpIn:
		if len(r.Values) == 1 {
			return key + "=" + r.Values[0]
		}
		return key + " in (" + strings.Join(r.Values, ",") + ")"
	case OpNotIn:
		return key + " notin (" + strings.Join(r.Values, ",") + ")"
	case OpExists:
		return key
	case OpDoesNotExist:
		return "!" + key
	}
	return key + " <" + string(r.Operator) + ">"
}

func compareRequirements(a, b Requirement) int {
	return cmp.Or(
		cmp.Compare(a.Key, b.Key),
		cmp.Compare(a.Source, b.Source),
		cmp.Compare(a.Operator, b.Operator),
		slices.Compare(a.Values, b.Values),
	)
}

// EndpointSelector selects identities by their labels: it matches a label
// set satisfying every Requirement. The empty selector matches every
// identity (reserved, CIDR and remote-cluster ones included); the parsers
// narrow selectors from documents to a namespace and cluster before they
// reach the model, so an empty selector only appears where a policy means
// "any peer". The zero value is the empty selector.
type EndpointSelector struct {
	requirements []Requirement
}

// NewSelector returns the selector requiring every r, in canonical order.
func NewSelector(reqs ...Requirement) EndpointSelector {
	out := make([]Requirement, 0, len(reqs))
	for _, r := range reqs {
		if len(r.Values) == 0 {
			r.Values = nil
		}
		r.Values = slices.Clone(r.Values) // never the caller's
		if !sortedUnique(r.Values) {
			slices.Sort(r.Values)
			r.Values = slices.Compact(r.Values)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, compareRequirements)
	out = slices.CompactFunc(out, func(a, b Requirement) bool { return compareRequirements(a, b) == 0 })
	return EndpointSelector{requirements: out}
}

// SelectLabels returns the selector matching identities that carry every
// label in ls (each label an In requirement with its one value).
func SelectLabels(ls ...labels.Label) EndpointSelector {
	reqs := make([]Requirement, len(ls))
	for i, l := range ls {
		reqs[i] = Requirement{Source: l.Source, Key: l.Key, Operator: OpIn, Values: []string{l.Value}}
	}
	return NewSelector(reqs...)
}

// Requirements returns a copy of the requirements, in canonical order.
func (s EndpointSelector) Requirements() []Requirement {
	out := slices.Clone(s.requirements)
	for i := range out {
		out[i].Values = slices.Clone(out[i].Values)
	}
	return out
}

// IsWildcard reports whether s has no requirement and so matches every
// identity.
func (s EndpointSelector) IsWildcard() bool { return len(s.requirements) == 0 }

// Matches reports whether ls, a sorted label set, satisfies every
// requirement of s.
func (s EndpointSelector) Matches(ls labels.Labels) bool {
	for _, r := range s.requirements {
		if !r.Matches(ls) {
			return false
		}
	}
	return true
}

// Equal reports whether two selectors have the same requirements.
func (s EndpointSelector) Equal(other EndpointSelector) bool {
	return slices.EqualFunc(s.requirements, other.requirements,
		func(a, b Requirement) bool { return compareRequirements(a, b) == 0 })
}

// String joins the requirements with ","; the wildcard is "".
func (s EndpointSelector) String() string {
	parts := make([]string, len(s.requirements))
	for i, r := range s.requirements {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// MarshalJSON writes the selector as its String, for dumps and the API.
func (s EndpointSelector) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// with returns s with reqs added.
func (s EndpointSelector) with(reqs ...Requirement) EndpointSelector {
	// NewSelector copies the values: s's need no copy first.
	return NewSelector(append(slices.Clone(s.requirements), reqs...)...)
}

// sortedUnique reports whether vs is sorted without duplicates.
func sortedUnique(vs []string) bool {
	for i := 1; i < len(vs); i++ {
		if vs[i-1] >= vs[i] {
			return false
		}
	}
	return true
}

// hasKey reports whether a requirement is about key with one of sources.
func (s EndpointSelector) hasKey(key string, sources ...string) bool {
	return slices.ContainsFunc(s.requirements, func(r Requirement) bool {
		return r.Key == key && slices.Contains(sources, r.Source)
	})
}

// hasKeyPrefix reports whether a requirement is about a key starting
// with prefix, with one of sources.
func (s EndpointSelector) hasKeyPrefix(prefix string, sources ...string) bool {
	return slices.ContainsFunc(s.requirements, func(r Requirement) bool {
		return strings.HasPrefix(r.Key, prefix) && slices.Contains(sources, r.Source)
	})
}

// hasSource reports whether a requirement is about a label of source.
func (s EndpointSelector) hasSource(source string) bool {
	return slices.ContainsFunc(s.requirements, func(r Requirement) bool { return r.Source == source })
}
