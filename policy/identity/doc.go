// Package identity holds security identities: the numeric id shared by
// every endpoint with the same identity-relevant labels, in Cilium's
// layout (reserved ids 1-10, cluster-scoped global ids with the cluster id
// in the upper bits, local CIDR identities in scope 1<<24), the cluster
// configuration (--cluster-name, --cluster-id, --max-connected-clusters),
// the global allocator on the kvstore, the identity cache with change
// notifications for the selector cache, and local CIDR identities.
//
// Cell provides the Allocator (DESIGN.md §4, flows 1 and 2). A local
// endpoint's labels get k8s:io.cilium.k8s.policy.cluster=<cluster-name>
// and a global identity from this cluster's range, agreed on by every
// agent through kvstore/allocator under cilium/state/identities/v1 (in
// standalone mode, --kvstore empty, from memory). CIDR label sets
// (CIDRLabels) get reference-counted local identities. The cache holds
// every identity of the cluster, watched from the kvstore; entries that
// are malformed or belong to another cluster are skipped and reported on
// the "Identities" status line. Observers registered with ObserverOut
// (the selector cache) hear of every identity that appears or goes away,
// in order. GET /v1/identity serves `apiary identity list|get`.
package identity
