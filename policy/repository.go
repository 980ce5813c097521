package policy

import (
	"context"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// Repository holds the rules in force. Changes are serialized: each is
// applied under the repository lock in call order and gets the next
// revision. Resolve returns the policy of an identity at the current
// revision, shared by every endpoint with that identity.
type Repository struct {
	cache *selectorcache.Cache
	peers *peerPortState

	mu       sync.Mutex
	rules    ruleSet
	revision uint64
	changed  chan struct{} // closed and replaced at each revision
	resolved map[identity.NumericIdentity]*SelectorPolicy
	mode     EnforcementMode
	audit    bool
}

// NewRepository returns an empty repository at revision 1 whose resolved
// policies select peers through cache.
func NewRepository(cache *selectorcache.Cache) *Repository {
	return &Repository{
		cache:    cache,
		peers:    newPeerPortState(),
		rules:    newRuleSet(),
		revision: 1,
		changed:  make(chan struct{}),
		resolved: make(map[identity.NumericIdentity]*SelectorPolicy),
	}
}

// Revision returns the current revision.
func (r *Repository) Revision() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.revision
}

// WaitForRevision waits until the repository is at rev or later.
func (r *Repository) WaitForRevision(ctx context.Context, rev uint64) error {
	for {
		r.mu.Lock()
		cur, ch := r.revision, r.changed
		r.mu.Unlock()
		if cur >= rev {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Rules returns the rules in force, in insertion order.
func (r *Repository) Rules() []*policyapi.Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rules.all())
}

// Add adds rules and returns the new revision. Adding a rule (the same
// pointer) twice has no effect.
func (r *Repository) Add(rules ...*policyapi.Rule) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules.add(rules...)
	return r.bumpLocked()
}

// ReplaceByLabels deletes the rules carrying every label of origin (the
// origin labels of a policy: name, namespace, uid...) and adds rules in
// their place, in one revision, which it returns.
func (r *Repository) ReplaceByLabels(origin labels.Labels, rules ...*policyapi.Rule) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules.deleteMatching(origin)
	r.rules.add(rules...)
	return r.bumpLocked()
}

// DeleteByLabels deletes the rules carrying every label of origin and
// returns the new revision and how many rules went. Deleting nothing
// still makes a revision, so callers can always wait for theirs.
func (r *Repository) DeleteByLabels(origin labels.Labels) (rev uint64, deleted int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	deleted = r.rules.deleteMatching(origin)
	return r.bumpLocked(), deleted
}

// bumpLocked moves to the next revision and drops the resolved policies
// of the previous one.
func (r *Repository) bumpLocked() uint64 {
	r.revision++
	close(r.changed)
	r.changed = make(chan struct{})
	stale := r.resolved
	r.resolved = make(map[identity.NumericIdentity]*SelectorPolicy)
	r.cache.Locked(func() {
		for _, sp := range stale {
			sp.markStaleLocked()
		}
	})
	return r.revision
}

// Resolve returns the policy of the identity ident at the current
// revision: the rules selecting it, with their peers registered in the
// selector cache. Endpoints with the same identity share it; after a
// revision change, callers resolve again and distill a new
// EndpointPolicy, detaching the old one.
func (r *Repository) Resolve(ident *identity.Identity) *SelectorPolicy {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sp, ok := r.resolved[ident.ID]; ok && sp.labels.Equal(ident.Labels) {
		return sp
	}
	if old, ok := r.resolved[ident.ID]; ok {
		r.cache.Locked(old.markStaleLocked)
	}
	sp := newSelectorPolicy(r.cache, r.peers, ident, r.revision, r.rules.all())
	if r.mode == EnforceAlways {
		sp.defaultDeny = [2]bool{true, true}
	}
	r.resolved[ident.ID] = sp
	return sp
}
