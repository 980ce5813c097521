// Package srchash computes the fingerprint of the eBPF C sources that the
// committed objects were generated from, so a test can tell when someone
// edited a source without running `make bpf`.
//
// It may import only the standard library (docs/design.md, Layers).
package srchash
