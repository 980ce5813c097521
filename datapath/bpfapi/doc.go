// Package bpfapi serves the content of the datapath's pinned BPF maps
// over the REST API, for `apiary bpf ...`: GET /v1/bpf/ipcache (paged),
// /v1/bpf/policy/{endpoint-id} (with the labels of each identity from
// the identity cache), /v1/bpf/ct (paged) and /v1/bpf/metrics. The maps
// are opened under the loader's --bpf-root for each request and only
// read; what is shown is what the kernel enforces, not what the control
// plane meant to write (compare with GET /v1/ipcache and
// /v1/endpoint/{id}).
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package bpfapi
