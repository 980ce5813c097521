// Command gen writes sources.lock in the current directory: the sha256 of
// the eBPF C sources and the clang version that compiled them. `go
// generate` runs it after bpf2go.
//
// It may import only the standard library and third-party modules
// (cilium/ebpf); only the datapath imports it (docs/design.md, Layers).
package main
