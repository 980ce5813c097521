// Package selectorcache keeps, for every distinct peer selector used by
// the policy engine, the set of identities it currently selects.
//
// The policy repository turns each peer of a rule (an endpoint selector,
// an entity's selectors, a CIDR rule with its except list) into a
// Selector and registers it with AddSelector together with a
// SelectionUser, the per-identity resolved policy of package policy. The
// Cache implements identity.Observer: when the identity cell reports
// identities added or deleted, the cache updates the sets of the
// selectors they match and tells each selector's users which identities
// came and went, so that the users can update endpoint map state
// incrementally instead of recomputing policy (docs/design.md, Flow 1:
// policy -> BPF policy map).
//
// CIDR peers select CIDR identities, whose labels are
// identity.CIDRLabels(prefix); the identities themselves are allocated
// elsewhere (the policy cell) and arrive here as ordinary identity
// changes.
//
// Both directions are indexed by label: a new selector looks only at the
// identities carrying one of the values of one of its In requirements
// (or its CIDR label), and an identity change only at the selectors
// filed under one of its labels.
//
// Locking: one mutex guards the cache and everything its users keep in
// step with it. Users are called with it held; Locked runs a function
// with it held, for readers that need the selections to stay still.
//
// It is part of the policy engine: it may import the leaves and the
// engine's packages (policy, policy/identity, policy/labels,
// policy/policyapi, policy/selectorcache and policy/source), never cells
// or kvstore, so it holds no agent glue (docs/design.md, Layers).
package selectorcache
