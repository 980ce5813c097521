// Package identity holds security identities as plain types: the
// numeric id shared by every endpoint with the same identity-relevant
// labels, in Cilium's layout (reserved ids 1-10, cluster-scoped global
// ids with the cluster id in the upper bits, local CIDR identities in
// scope 1<<24), the labels of reserved and CIDR identities, and the
// interfaces the rest of the agent uses: Allocator (hands out identities)
// and Observer (hears of identities appearing and going away, as the
// selector cache does).
//
// It imports nothing of the agent's framework or the kvstore, so the
// policy engine and the offline simulator build on it alone. The
// allocator itself, on the kvstore or in memory, with its cell, REST API
// and status line, is in package identitycell.
//
// It is part of the policy engine: it may import the leaves and the
// engine's packages (policy, policy/identity, policy/labels,
// policy/policyapi, policy/selectorcache and policy/source), never cells
// or kvstore, so it holds no agent glue (docs/design.md, Layers).
package identity
