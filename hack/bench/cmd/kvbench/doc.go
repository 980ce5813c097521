// Command kvbench compares apiary's kvstore stores with plain etcd client
// code on the same real (embedded) etcd server. The read
// comparison syncs a WatchStore over N keys of ~200-byte JSON next to a
// paginated client/v3 Get plus json.Unmarshal of the same keys (goal:
// ratio <= 1.3). The write comparison upserts N keys through a SyncStore
// (batched transactions on the session lease, its own keys watched) until
// its sync canary is written, next to raw client/v3 transactions of the
// same size on one lease, as many in flight as the SyncStore's workers
// (like with like: the ratio is the cost of the SyncStore's queue,
// conditional writes and canary).
//
// Run it with:
//
//	cd hack/bench && go run ./cmd/kvbench [-keys 100000] [-runs 3]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
