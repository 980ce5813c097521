// Package identity holds security identities: the numeric id shared by
// every endpoint with the same identity-relevant labels, in Cilium's
// layout (reserved ids 1-10, cluster-scoped global ids with the cluster id
// in the upper bits, local CIDR identities in scope 1<<24), the cluster
// configuration (--cluster-name, --cluster-id, --max-connected-clusters),
// the global allocator on the kvstore, the identity cache with change
// notifications for the selector cache, and local CIDR identities.
package identity
