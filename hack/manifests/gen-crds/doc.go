// Command gen-crds writes the policy CRDs of package manifests into
// install/kubernetes/crds (run from hack/manifests: `make manifests-gen`).
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
