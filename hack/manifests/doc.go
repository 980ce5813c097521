// Package manifests generates the CiliumNetworkPolicy and
// CiliumClusterwideNetworkPolicy CRDs of install/kubernetes/crds and
// checks every manifest of install/kubernetes (`make manifests`): each
// object decodes strictly into its Kubernetes API type, the CRDs pass the
// API server's own CRD validation (k8s.io/apiextensions-apiserver), and
// every CNP and CCNP of the policy test data validates against them.
//
// It is a module of its own so that the main module does not depend on
// k8s.io/apiextensions-apiserver.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package manifests
