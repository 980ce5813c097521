package selectorcache

import (
	"iter"
	"maps"
	"slices"

	"github.com/apiary-net/apiary/policy/identity"
)

// idSetSmall is the size up to which an idSet keeps its identities in a
// slice.
const idSetSmall = 8

// idSet is a set of identities for the label index, where most sets
// are tiny (a label one pod carries) and a few are large (a namespace):
// up to idSetSmall identities are an unsorted slice (a few bytes, not a
// map of its own), more a map. The zero value is an empty set; it is a
// value type, so a caller that changes a set it got from a map stores it
// back.
type idSet struct {
	small []identity.NumericIdentity
	big   map[identity.NumericIdentity]struct{}
}

// len returns the number of identities.
func (s idSet) len() int {
	if s.big != nil {
		return len(s.big)
	}
	return len(s.small)
}

// add adds id.
func (s *idSet) add(id identity.NumericIdentity) {
	switch {
	case s.big != nil:
		s.big[id] = struct{}{}
	case slices.Contains(s.small, id):
	case len(s.small) < idSetSmall:
		s.small = append(s.small, id)
	default:
		s.big = make(map[identity.NumericIdentity]struct{}, 2*idSetSmall)
		for _, o := range s.small {
			s.big[o] = struct{}{}
		}
		s.big[id] = struct{}{}
		s.small = nil
	}
}

// remove removes id. A set that was large stays a map until empty.
func (s *idSet) remove(id identity.NumericIdentity) {
	if s.big != nil {
		delete(s.big, id)
		return
	}
	if i := slices.Index(s.small, id); i >= 0 {
		last := len(s.small) - 1
		s.small[i] = s.small[last]
		s.small = s.small[:last]
	}
}

// all returns the identities in no particular order.
func (s idSet) all() iter.Seq[identity.NumericIdentity] {
	if s.big != nil {
		return maps.Keys(s.big)
	}
	return slices.Values(s.small)
}
