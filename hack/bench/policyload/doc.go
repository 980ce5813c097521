// Package policyload generates the policy benchmark's workload once, as
// plain data (label maps and YAML documents) that apiary's engine and
// Cilium's engine each consume with their own parser:
//
//   - Identities identities labelled app=<n%Apps>, instance=<n>, in
//     namespace Namespace of cluster Cluster, numbered from FirstID;
//   - Policies CiliumNetworkPolicies where policy i selects app=i%Apps
//     and allows ingress from app=(i%Apps + 1 + i/Apps) % Apps on
//     80/TCP, so that each app has Policies/Apps policies allowing from
//     as many other apps.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package policyload
