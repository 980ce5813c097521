// Package kvstoretest gives tests a real etcd: an embedded server
// (go.etcd.io/etcd/server/v3/embed) on 127.0.0.1 with its data in a
// temporary directory, optional TLS with certificates made at test time,
// and hooks to stop, restart and compact it for fault tests. It also has
// an in-memory Backend with the same semantics for pure unit tests, and
// the conformance suite both are held to.
//
// It may import packages of cells and kvstore, nothing of policy, datapath
// or clustermesh (docs/design.md, Layers).
package kvstoretest
