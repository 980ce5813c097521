// Package bench times apiary's hive against go.uber.org/fx and
// github.com/cilium/hive on the same generated graph of 200 cells with
// lifecycle hooks. It is a module of its own so that neither
// peer enters apiary's go.mod; its go.work
// builds it against the apiary module in this work tree (../..), so a new
// dependency of apiary does not need a `go mod tidy` here first.
//
// One run builds the container from the graph's declarations, populates
// it (every constructor runs), starts it and stops it. All frameworks
// log to nowhere, so log printing is not compared. The declarations
// themselves (graph.HiveCells, graph.FxOptions, graph.CiliumCells) are
// package variables, built once at init as in real programs, and are not
// timed.
//
// cmd/hivebench prints medians and the ratios; BenchmarkHive, BenchmarkFx
// and BenchmarkCiliumHive are the same runs for benchstat.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package bench
