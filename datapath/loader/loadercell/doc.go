// Package loadercell wires the BPF loader (datapath/loader) into the
// agent: the --bpf-root, --bpf-attach-mode and --bpf-policy-map-max
// flags, and a loader that mounts the bpffs root and opens the shared
// pinned maps at start and releases its file descriptors at stop (pinned
// maps and links stay, so programs keep enforcing while the agent is
// down).
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers). It owns
// --bpf-policy-map-max, the size of the policy maps it creates, and
// provides it as the policy.MapStateLimit the policy cell's trace reports
// against.
package loadercell
