package policy

import (
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// ReplaceMatchingAny deletes the rules carrying every label of any of
// origins and adds rules in their place, in one revision, which it
// returns: an import of several policies, or a file's rules, replaced
// atomically.
func (r *Repository) ReplaceMatchingAny(origins []labels.Labels, rules ...*policyapi.Rule) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range origins {
		r.rules.deleteMatching(o)
	}
	r.rules.add(rules...)
	return r.bumpLocked()
}
