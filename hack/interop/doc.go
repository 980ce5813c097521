// Package interop checks apiary's ClusterMesh formats with Cilium's own
// code, both ways:
//
//   - Cilium reads apiary: Cilium's KVStoreMesh, composed as the
//     clustermesh-apiserver's kvstoremesh command composes it, connects to
//     the etcd of an apiary cluster and must report it ready with its
//     nodes, endpoints and identities, mirroring what apiary published,
//     and the global services an apiary agent publishes from a real
//     kube-apiserver, which a Cilium agent's watch store then decodes and
//     validates.
//   - apiary reads Cilium: Cilium's writers (clustercfg.Set, the
//     SyncStores clustermesh-apiserver uses, Cilium's Node,
//     IPIdentityPair, label encoders and ClusterService) publish a
//     cluster; apiary's decoders and an apiary agent's watchers (services
//     included) read every entry, and an agent's BPF load balancer sends a
//     global service's connections to that cluster's backends (real
//     packets, network namespaces) per the service's affinity.
//
// It is a module of its own (like hack/bench), so the main module never
// depends on Cilium.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package interop
