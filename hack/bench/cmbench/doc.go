// Package cmbench measures how fast apiary's ClusterMesh code takes in a
// large remote cluster: a real (embedded) etcd
// holding cluster2's nodes, identities and ipcache entries in Cilium's
// formats, read once by apiary's remote connection (clustermesh/remote
// with the agent's node manager, ipcache and identity cache) and once by
// a raw client/v3 paginated Get plus decode of the same keys; then the
// latency from a remote put to the local ipcache listener.
// cmd/cmbench prints the results; nothing here asserts on time.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package cmbench
