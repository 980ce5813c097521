// Command bpfmapbench times apiary's BPF map writers against raw map
// updates of the same entries in the same run:
//
//   - ipcache: N /32 prefixes, in a shuffled order, written into an empty
//     ipcache map with ApplyBatch, next to raw batch updates of the same
//     keys, precomputed, in the same order;
//   - policy: a 10k-key map state written into an empty policy map with
//     Sync, next to raw updates of the translated keys; and a 1-key change
//     (add, then delete, of one key) with Apply, next to raw update/delete.
//
// It prints entries/s or µs per change and the ratios (goal for the
// ipcache: >= 0.8x raw). Needs root (BPF and a bpffs mount in a temporary
// directory).
//
//	cd hack/bench && go run ./cmd/bpfmapbench [-prefixes 100000] [-keys 10000] [-rounds 5]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
