// Package identitycell is the identity allocator of the agent and its
// cell: reserved identities, the global identities of this cluster on the
// kvstore (package kvstore/allocator, or in memory in standalone mode),
// local CIDR identities, the identity cache and its observers (the
// selector cache among them), the watchers of remote clusters' identities,
// garbage collection, the --labels filter, GET /v1/identity and the
// "Identities" status line (docs/design.md, Flow 3: pod -> endpoint ->
// identity). The plain types are in package identity.
//
// It may import packages of cells, kvstore and policy, nothing of datapath
// or clustermesh and nothing that touches BPF (docs/design.md, Layers).
package identitycell
