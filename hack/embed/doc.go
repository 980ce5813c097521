// Command embed is apiary embedded by another CNI: apiary's control plane
// (kvstore client, local node, identities, ipcache, policy) composed with
// a datapath of the program's own, which prints the map-state changes a
// BPF datapath would write. docs/embedding.md walks through it.
//
//	go run ./hack/embed --policy-dir /tmp/policies \
//	    --endpoint app=web@10.0.1.5 --endpoint app=client@10.0.1.6
//
// It runs until SIGINT or SIGTERM, standalone (--kvstore empty) or
// against etcd (--kvstore etcd --kvstore-opt etcd.address=...).
//
// It is a program: it may import any package of apiary (docs/design.md,
// Layers).
package main
