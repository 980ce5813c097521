// Command hivebench times populate+start+stop of the 200-cell benchmark
// graph with apiary's hive, go.uber.org/fx and github.com/cilium/hive,
// rotating their order, and prints the median and p90 of each and the
// ratios of the medians: apiary/fx, apiary/cilium-hive and apiary over the
// faster of the two peers (the goal is apiary/min(peers) <= 0.5).
//
//	cd hack/bench && go run ./cmd/hivebench [-n 50] [-warmup 5]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
