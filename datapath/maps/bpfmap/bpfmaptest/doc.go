// Package bpfmaptest gives tests a private bpffs root: a temporary
// directory with a bpf filesystem mounted on it, unmounted at the end of
// the test, so tests pin maps and links without touching /sys/fs/bpf.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package bpfmaptest
