package policy

import (
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// policyEntry is one peer of one peer rule that selects the identity:
// traffic in dir with the peer's identities (or any peer when sel is
// nil) on the rule's ports is allowed or denied.
type policyEntry struct {
	dir  Direction
	deny bool
	sel  *selectorcache.CachedSelector
	rule *policyapi.PeerRule
}

// SelectorPolicy is the policy of one identity at one revision: the
// rules selecting it, flattened into entries whose peers are cached
// selectors. It does not depend on endpoint details (the endpoint's own
// named ports); those come in with DistillPolicy.
type SelectorPolicy struct {
	cache    *selectorcache.Cache
	peers    *peerPortState
	labels   labels.Labels
	revision uint64
	// defaultDeny says, per Direction, whether the identity is in
	// default deny.
	defaultDeny [2]bool
	entries     []policyEntry
	bySelector  map[*selectorcache.CachedSelector][]int

	// Guarded by the cache lock:
	endpoints map[*EndpointPolicy]struct{}
	stale     bool
	released  bool
}

var _ selectorcache.SelectionUser = (*SelectorPolicy)(nil)

func newSelectorPolicy(cache *selectorcache.Cache, peers *peerPortState, ident *identity.Identity, rev uint64, rules []*policyapi.Rule) *SelectorPolicy {
	sp := &SelectorPolicy{
		cache:      cache,
		peers:      peers,
		labels:     ident.Labels,
		revision:   rev,
		bySelector: make(map[*selectorcache.CachedSelector][]int),
		endpoints:  make(map[*EndpointPolicy]struct{}),
	}
	cache.Locked(func() {
		for _, rule := range rules {
			if rule.Subject.Selects(ident.Labels) {
				sp.addRuleLocked(rule)
			}
		}
	})
	return sp
}

func (sp *SelectorPolicy) addRuleLocked(rule *policyapi.Rule) {
	sp.defaultDeny[Ingress] = sp.defaultDeny[Ingress] || rule.DefaultDeny.Ingress
	sp.defaultDeny[Egress] = sp.defaultDeny[Egress] || rule.DefaultDeny.Egress
	sp.addPeerRulesLocked(Ingress, false, rule.Ingress)
	sp.addPeerRulesLocked(Ingress, true, rule.IngressDeny)
	sp.addPeerRulesLocked(Egress, false, rule.Egress)
	sp.addPeerRulesLocked(Egress, true, rule.EgressDeny)
}

func (sp *SelectorPolicy) addPeerRulesLocked(dir Direction, deny bool, prs []policyapi.PeerRule) {
	for i := range prs {
		pr := &prs[i]
		for _, peer := range pr.Peers {
			e := policyEntry{dir: dir, deny: deny, rule: pr}
			if sel, ok := selectorcache.PeerSelector(peer); ok {
				e.sel = sp.cache.AddSelectorLocked(sel, sp)
				sp.bySelector[e.sel] = append(sp.bySelector[e.sel], len(sp.entries))
			}
			sp.entries = append(sp.entries, e)
		}
	}
}

// Revision returns the repository revision the policy was resolved at.
func (sp *SelectorPolicy) Revision() uint64 { return sp.revision }

// DefaultDeny reports whether the identity is in default deny in dir.
func (sp *SelectorPolicy) DefaultDeny(dir Direction) bool { return sp.defaultDeny[dir] }

// IdentitySelectionUpdated passes a selector's new and gone identities
// on to every endpoint using the policy (selectorcache.SelectionUser).
func (sp *SelectorPolicy) IdentitySelectionUpdated(cs *selectorcache.CachedSelector, added, deleted []identity.NumericIdentity) {
	idx := sp.bySelector[cs]
	for ep := range sp.endpoints {
		for _, i := range idx {
			ep.updateEntryLocked(i, added, deleted)
		}
	}
}

// markStaleLocked records that a newer revision replaced sp; it releases
// its selectors once no endpoint uses it.
func (sp *SelectorPolicy) markStaleLocked() {
	sp.stale = true
	sp.releaseIfUnusedLocked()
}

func (sp *SelectorPolicy) releaseIfUnusedLocked() {
	if !sp.stale || sp.released || len(sp.endpoints) > 0 {
		return
	}
	sp.released = true
	for _, e := range sp.entries {
		if e.sel != nil {
			sp.cache.RemoveSelectorLocked(e.sel, sp)
		}
	}
}

// reacquireLocked registers the selectors of a released policy again,
// for an endpoint distilled from it after all others detached.
func (sp *SelectorPolicy) reacquireLocked() {
	if !sp.released {
		return
	}
	sp.released = false
	sp.bySelector = make(map[*selectorcache.CachedSelector][]int)
	for i, e := range sp.entries {
		if e.sel != nil {
			cs := sp.cache.AddSelectorLocked(e.sel.Selector(), sp)
			sp.entries[i].sel = cs
			sp.bySelector[cs] = append(sp.bySelector[cs], i)
		}
	}
}
