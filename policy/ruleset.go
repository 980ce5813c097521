package policy

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// ruleSet is the repository's rules, indexed by label so that deleting
// a policy's rules by its origin labels does not scan every rule, with
// the CIDR prefixes they name counted. A rule must not change once
// added: its prefixes are counted when it is added and uncounted when it
// is deleted.
type ruleSet struct {
	seq      uint64
	order    map[*policyapi.Rule]uint64
	byLabel  map[labels.Label]map[*policyapi.Rule]struct{}
	prefixes map[netip.Prefix]int // mentions in CIDR peers of the rules
	list     []*policyapi.Rule    // the rules in insertion order; nil after a change
}

func newRuleSet() ruleSet {
	return ruleSet{
		order:    make(map[*policyapi.Rule]uint64),
		byLabel:  make(map[labels.Label]map[*policyapi.Rule]struct{}),
		prefixes: make(map[netip.Prefix]int),
	}
}

// add adds rules; a rule already in the set stays where it was.
func (rs *ruleSet) add(rules ...*policyapi.Rule) {
	for _, rule := range rules {
		if _, ok := rs.order[rule]; ok {
			continue
		}
		rs.seq++
		rs.order[rule] = rs.seq
		for _, l := range rule.Labels {
			set, ok := rs.byLabel[l]
			if !ok {
				set = make(map[*policyapi.Rule]struct{})
				rs.byLabel[l] = set
			}
			set[rule] = struct{}{}
		}
		rulePrefixes(rule, func(p netip.Prefix) { rs.prefixes[p]++ })
		rs.list = nil
	}
}

// deleteMatching deletes the rules carrying every label of origin (none
// for an empty origin) and returns how many went.
func (rs *ruleSet) deleteMatching(origin labels.Labels) int {
	if len(origin) == 0 {
		return 0
	}
	smallest := rs.byLabel[origin[0]]
	for _, l := range origin[1:] {
		if set := rs.byLabel[l]; len(set) < len(smallest) {
			smallest = set
		}
	}
	var doomed []*policyapi.Rule
	for rule := range smallest {
		if rule.Labels.HasAll(origin) {
			doomed = append(doomed, rule)
		}
	}
	for _, rule := range doomed {
		delete(rs.order, rule)
		for _, l := range rule.Labels {
			delete(rs.byLabel[l], rule)
			if len(rs.byLabel[l]) == 0 {
				delete(rs.byLabel, l)
			}
		}
		rulePrefixes(rule, func(p netip.Prefix) {
			if rs.prefixes[p]--; rs.prefixes[p] <= 0 {
				delete(rs.prefixes, p)
			}
		})
		rs.list = nil
	}
	return len(doomed)
}

// all returns the rules in insertion order; the slice must not be
// modified.
func (rs *ruleSet) all() []*policyapi.Rule {
	if rs.list == nil {
		rs.list = make([]*policyapi.Rule, 0, len(rs.order))
		for rule := range rs.order {
			rs.list = append(rs.list, rule)
		}
		slices.SortFunc(rs.list, func(a, b *policyapi.Rule) int { return cmp.Compare(rs.order[a], rs.order[b]) })
	}
	return rs.list
}
