// Command bpfbench times apiary's from_container program per packet with
// BPF_PROG_TEST_RUN, next to two programs run the same way in the same
// process: a floor program doing the same parse, one LPM lookup and one
// hash lookup (hack/bench/bpffloor), and Cilium's own cil_from_container
// (bpf_lxc.c of cilium v1.20.x, hack/bench/ciliumlxc) with an ipcache
// entry and an egress allow entry for the same kind of flow. Two cases:
//
//   - new allowed flow: single runs (repeat 1), conntrack emptied before
//     each, so every run takes the new-flow path (ipcache, policy,
//     verdict event, conntrack create);
//   - established flow: one run of `-repeat` packets of a flow already in
//     conntrack.
//
// A row times an established packet right after an ipcache revision bump
// (apiary looks the flow's policy up again) against Cilium's established
// path, single runs for both. Four more rows time a flow to a ClusterIP (a service of two backends,
// both of the peer's identity, on TCP 80 and UDP 53), new and
// established, against Cilium's cil_from_container with the same services
// in its lb4 maps (per-packet LB): both programs look the service up,
// pick a backend, DNAT, and judge policy against the backend. These rows
// are single runs for both cases (BPF_PROG_TEST_RUN repeats the same
// packet, which the first run rewrote), so they include the per-run
// overhead the repeated rows do not; no floor is given for them.
//
// The floor does the least any datapath must for both cases: parse, one hash
// lookup and one LPM lookup. A third row puts the established case next
// to a stricter floor that skips the LPM lookup once the hash lookup hits
// (as apiary's programs skip the ipcache for tracked flows). Without
// -verdict-events no monitor client is listening, the agent's default:
// allowed new flows write no event (drops always do). -trace-events
// medium or none times the programs as with a Hubble observer listening
// (bpf/lib/trace.h): new flows, and at none every forwarded packet, write
// a trace event; in the established case's single long run the events
// ring fills after some thousand packets and the later writes fail fast,
// so that row is a lower bound.
//
// It prints ns/packet (the kernel's own timing of the runs; median of the
// single runs) and the ratios. Goals: <= 1.5x the floor for new
// flows, <= 1.2x for established ones, and below Cilium on both. Needs
// root (BPF and a bpffs mount in a temporary directory).
//
//	cd hack/bench && go run ./cmd/bpfbench [-runs 20000] [-repeat 1000000] [-rounds 5] [-verdict-events] [-trace-events off|medium|none]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
