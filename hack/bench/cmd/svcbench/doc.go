// Command svcbench times the service control plane against raw BPF map
// updates of the same entries, in the same run (issue 24, Benchmarks):
//
//   - initial sync: -services (10,000) Kubernetes Services of -backends
//     (10) endpoints each, every Service and its EndpointSlice handed to
//     the service manager as the Kubernetes watcher hands them
//     (svcmanager.FromKubernetes, Manager.Upsert), then Manager.Reconcile,
//     which writes them through the real lbmap writer into empty pinned
//     maps; against raw batch updates (BPF_MAP_UPDATE_BATCH) of the same
//     entries, read back from a manager's maps before the rounds, into
//     empty maps of the same specs;
//   - EndpointSlice change: one Service's slice gains a backend, then
//     loses it again, -changes times over services spread through the
//     10,000, from the same input until Upsert returns (the manager
//     writes synchronously: the maps hold the change then); against the
//     raw updates and deletes of exactly the entries each change touches
//     (the new backend, its slot and the master entry; the master entry,
//     the slot and the backend), recorded from a manager's maps before
//     the rounds. Each change is timed on its own, after the bench has
//     read its EndpointSlice once, untimed: the informer calls the
//     handler with an object it has just decoded, while the bench's
//     20,000 objects, built before the sync, are long out of the CPU's
//     caches. Both sides follow the same protocol, and the cost of the
//     clock reads around an empty section is taken off both. The
//     service's other state (its Service object, the manager's and the
//     writer's entries, the kernel's maps) is as cold as 10,000
//     services leave it.
//
// Each round uses fresh maps, alternates which side goes first and runs
// a GC before each timed section. It prints the median wall time and
// process CPU time (user + system of every thread, GC included) of each
// side and their ratios, goal <= 1.5x. Needs root (BPF and a bpffs
// mount in a temporary directory).
//
//	cd hack/bench && go run ./cmd/svcbench [-services 10000] [-backends 10] [-changes 2000] [-rounds 5] [-cpuprofile f] [-memprofile f]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
