// Command svcbench times the service control plane against raw BPF map
// updates of the same entries, in the same run (issue 24, Benchmarks):
//
//   - initial sync: -services (10,000) Kubernetes Services of -backends
//     (10) endpoints each, every Service and its EndpointSlice handed to
//     the agent's Kubernetes watcher (k8ssvc.Watcher) as the informers'
//     initial listings deliver them, then both listings' Sync, on which
//     the watcher hands every service to the service manager (its
//     svcmanager.Converter, Manager.Upsert), then Manager.Reconcile,
//     which writes them through the real lbmap writer into empty pinned
//     maps; against raw batch updates (BPF_MAP_UPDATE_BATCH) of the same
//     entries, read back from a manager's maps before the rounds, into
//     empty maps of the same specs;
//   - EndpointSlice change: one Service's slice gains a backend, then
//     loses it again, -changes times over services spread through the
//     10,000, from the slice's event to the watcher until it returns
//     (the manager writes synchronously: the maps hold the change
//     then); against the
//     raw writes of exactly the entries each change touches, in the
//     calls the writer makes (the new backend, then its slot and the
//     master entry in one batch update; the master entry, the slot
//     deleted, the backend deleted), recorded from a manager's maps
//     before the rounds: the ratio is the control plane's work on top
//     of its own syscalls. Each change is timed on
//     both sides, one after the other (which first alternates), so that
//     a slow moment of the shared machine falls on both; before each
//     side's turn the bench reads the change's EndpointSlice once,
//     untimed, as the informer has just decoded it when it calls the
//     handler (the bench's 20,000 objects, built before the sync, are
//     long out of the CPU's caches otherwise). The cost of the clock
//     reads around an empty section is taken off both sides. The
//     service's other state (its Service object, the manager's and the
//     writer's entries, the kernel's maps) is as cold as 10,000
//     services leave it.
//
// With -layers it also times the change's two halves, each on state of
// its own synced as apiary's, in the same rotation: the watcher, the
// converter and the manager with a writer that writes nothing, and the
// lbmap writer alone,
// handed the list the manager would hand it (computed untimed just
// before), each against the same raw writes. The halves add up to
// about the whole; they show which part a change's time goes to.
//
// Each round uses fresh maps and runs a GC before each timed section;
// the initial syncs alternate which side goes first. It prints the
// median wall time and process CPU time (user + system of every thread,
// GC included) of each side and their ratios, goal <= 1.5x. Needs root
// (BPF and a bpffs mount in a temporary directory).
//
//	cd hack/bench && go run ./cmd/svcbench [-services 10000] [-backends 10] [-changes 2000] [-rounds 5] [-layers] [-cpuprofile f] [-memprofile f]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
