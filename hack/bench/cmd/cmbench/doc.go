// Command cmbench measures apiary's ClusterMesh against a remote cluster
// of 5,000 nodes, 50,000 identities and 100,000 ipcache entries in a
// real (embedded) etcd: the time from the remote connection's
// start until every entry is in the node manager, ipcache and identity
// cache, next to a raw client/v3 paginated Get plus decode of the same
// keys in the same run (goal: ratio <= 1.5); then the latency from a
// remote put to the local ipcache listener with a writer doing 1,000
// puts/s (goal: p99 < 50 ms).
//
// Run it with:
//
//	cd hack/bench && go run ./cmd/cmbench [-runs 5] [-nodes 5000 -identities 50000 -endpoints 100000]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
