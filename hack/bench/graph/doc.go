// Package graph is the generated benchmark graph of the hive benchmark
// (hivebench): N distinct
// types T000..T199, each built by a constructor that depends on 0 to 3
// earlier types and appends one lifecycle hook. The same graph is declared
// three times, as apiary cells (HiveCells), as go.uber.org/fx options
// (FxOptions) and as github.com/cilium/hive cells (CiliumCells), so
// package bench can time the three frameworks on it.
//
// The *_gen.go files are written by ../gen and committed; regenerate them
// with `go generate ./graph` from hack/bench.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package graph

//go:generate go run ../gen -n 200 -seed 1 -out .
