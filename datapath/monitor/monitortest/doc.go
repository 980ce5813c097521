// Package monitortest starts, for tests, an agent hive with the real BPF
// loader on a private bpffs, the identity cache (standalone), the
// monitor and the BPF map API behind a REST socket, and runs packets
// through a loaded endpoint's programs with BPF_PROG_TEST_RUN so that
// the maps and the events ring buffer hold real datapath output. Tests
// of the monitor cell, the BPF API and the CLI share it.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package monitortest
