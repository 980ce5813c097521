package selectorcache

import (
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// labelIndex maps "key=value" of every label of the known identities
// (whatever its source) to the identities carrying it, so that a new
// selector with an In requirement looks only at candidates instead of
// every identity.
type labelIndex map[string]idSet

func indexKey(key, value string) string { return key + "=" + value }

func (ix labelIndex) add(id identity.NumericIdentity, ls labels.Labels) {
	for _, l := range ls {
		k := indexKey(l.Key, l.Value)
		set := ix[k]
		set.add(id)
		ix[k] = set
	}
}

func (ix labelIndex) remove(id identity.NumericIdentity, ls labels.Labels) {
	for _, l := range ls {
		k := indexKey(l.Key, l.Value)
		set, ok := ix[k]
		if !ok {
			continue
		}
		set.remove(id)
		if set.len() == 0 {
			delete(ix, k)
		} else {
			ix[k] = set
		}
	}
}

// candidates returns the identities that can match sel, a superset of
// its selections, and the index keys it chose (an identity sel selects
// carries one of them); ok is false when sel has no In requirement to
// narrow the search by.
func (ix labelIndex) candidates(sel Selector) (out []identity.NumericIdentity, keys []string, ok bool) {
	var reqs []policyapi.Requirement
	switch s := sel.(type) {
	case EndpointSelector:
		reqs = s.Requirements()
	case CIDRSelector:
		// Only /0 also selects identities without its cidr: label
		// (the world identities).
		if s.Prefix.Bits() == 0 {
			return nil, nil, false
		}
		reqs = []policyapi.Requirement{{Key: labels.CIDRKey(s.Prefix), Operator: policyapi.OpIn, Values: []string{""}}}
	default:
		return nil, nil, false
	}
	var best []string
	bestSize := -1
	for _, r := range reqs {
		if r.Operator != policyapi.OpIn {
			continue
		}
		size := 0
		for _, v := range r.Values {
			size += ix[indexKey(r.Key, v)].len()
		}
		if bestSize < 0 || size < bestSize {
			best, bestSize = nil, size
			for _, v := range r.Values {
				best = append(best, indexKey(r.Key, v))
			}
		}
	}
	if bestSize < 0 {
		return nil, nil, false
	}
	for _, k := range best {
		for id := range ix[k].all() {
			out = append(out, id)
		}
	}
	return out, best, true
}
