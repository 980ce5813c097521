// Package k8sbench measures the initial sync of the agent's Kubernetes
// cells against a real kube-apiserver, next to bare client-go
// informers syncing the same objects in the same run.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package k8sbench
