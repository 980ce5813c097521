// Package kvstorecell wires the kvstore client (package kvstore) into the
// agent: the kvstore cell with Cilium's --kvstore and --kvstore-opt flags,
// the Client (etcd, or disabled in standalone mode), the optional
// heartbeat writer, the "KVStore" status line, metrics and the read-only
// GET /v1/kvstore API behind `apiary kvstore get|list`.
//
// It may import packages of cells and kvstore, nothing of policy, datapath
// or clustermesh (docs/design.md, Layers).
package kvstorecell
