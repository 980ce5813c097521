// Package loadercell wires the BPF loader (datapath/loader) into the
// agent: the --bpf-root and --bpf-attach-mode flags (the policy maps
// take --bpf-policy-map-max from the policy cell), and a loader
// that mounts the bpffs root and opens the shared pinned maps at start
// and releases its file descriptors at stop (pinned maps and links stay,
// so programs keep enforcing while the agent is down).
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package loadercell
