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
// against. It provides datapath.LBMapWriter (the service maps' writer,
// lbmap.Writer, open between start and stop) and, with --bpf-lb-sock and
// --enable-node-port, attaches the socket-level load balancer to
// --cgroup-root at start and the NodePort programs to the node's external
// devices: --devices as listed, or detected and followed (devices.go).
package loadercell
