// Package ctmap is the BPF connection-tracking maps ct4 and ct6 (LRU
// hashes): typed keys and values, a dump for `apiary bpf ct list`, and
// GC, which the conntrack GC job runs periodically to delete expired
// entries and, on its first run after a restore, entries of endpoints that
// were not restored.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package ctmap
