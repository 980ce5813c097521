// Command ipcachebench measures the ipcache's metadata layer: N prefix
// upserts (UpsertMetadata, one call each) until WaitForRevision of the
// last one returns, with one listener that sees every change. Two
// workloads run side by side on the real cells (kvstore in standalone
// mode, identity, ipcache):
//
//   - CIDR labels: every /32 carries reserved:world, so each needs its
//     own CIDR identity from the identity allocator (labels merged,
//     resolved, allocated, referenced);
//   - explicit identities: the entries a kvstore watcher or a local
//     endpoint make, with no allocation.
//
// It prints entries/s and heap allocations per entry of each, and the
// ratio of the two.
//
// Run it with:
//
//	cd hack/bench && go run ./cmd/ipcachebench [-prefixes 100000] [-runs 3]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
