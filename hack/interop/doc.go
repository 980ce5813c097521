// Package interop checks apiary's ClusterMesh formats with Cilium's own
// code (issue 13, "Interop, checked by Cilium's own code"), both ways:
//
//   - Cilium reads apiary: Cilium's KVStoreMesh, composed as the
//     clustermesh-apiserver's kvstoremesh command composes it, connects to
//     the etcd of an apiary cluster and must report it ready with its
//     nodes, endpoints and identities, mirroring what apiary published.
//   - apiary reads Cilium: Cilium's writers (clustercfg.Set, the
//     SyncStores clustermesh-apiserver uses, Cilium's Node,
//     IPIdentityPair and label encoders) publish a cluster; apiary's
//     decoders read every entry.
//
// It is a module of its own (like hack/bench), so the main module never
// depends on Cilium.
package interop
