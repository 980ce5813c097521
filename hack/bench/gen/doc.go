// Command gen writes the benchmark graph of hack/bench/graph: n distinct
// types, each with a constructor that depends on 0 to 3 earlier types and
// appends one lifecycle hook, as apiary cells, fx options and cilium/hive cells.
// The graph is a pseudo-random DAG from a fixed seed, so regenerating
// gives the same files. Run it through `go generate ./graph`.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
