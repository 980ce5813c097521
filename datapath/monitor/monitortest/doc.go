// Package monitortest starts, for tests, an agent hive with the real BPF
// loader on a private bpffs, the identity cache (standalone), the
// monitor and the BPF map API behind a REST socket, and runs packets
// through a loaded endpoint's programs with BPF_PROG_TEST_RUN so that
// the maps and the events ring buffer hold real datapath output. Tests
// of the monitor cell, the BPF API and the CLI share it.
//
// Imports: what a test agent needs (the framework, the loader and its
// cell, the maps, the monitor and BPF API cells, the kvstore and identity
// cells); only tests import it.
package monitortest
