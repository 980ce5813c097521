// Package bpfmaptest gives tests a private bpffs root: a temporary
// directory with a bpf filesystem mounted on it, unmounted at the end of
// the test, so tests pin maps and links without touching /sys/fs/bpf.
package bpfmaptest
