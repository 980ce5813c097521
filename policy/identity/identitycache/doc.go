// Package identitycache is the identity allocator and cache (what Cilium
// calls the caching identity allocator): reserved identities, the global
// identities of this cluster on the kvstore (through kvstore/allocator,
// with Cilium's key and value formats), as CiliumIdentity objects of
// the Kubernetes API server (CRDAllocator, CRDGC: identity allocation
// mode crd), or in memory in standalone mode,
// local CIDR identities, the caches of remote clusters' identities and
// their kvstore watchers (ClusterWatcher, read by clustermesh/remote), and
// the observers that hear of every change (ObserverOut: the selector cache
// and the endpoint manager register one). Manager implements
// identity.Allocator; the identity cell (identitycell) builds it and runs
// its jobs.
//
// It may import packages of cells, kvstore and policy, nothing of datapath
// or clustermesh and nothing that touches BPF (docs/design.md, Layers).
package identitycache
