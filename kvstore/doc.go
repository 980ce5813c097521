// Package kvstore is apiary's access to the cluster's key-value store
// (etcd): the Backend interface, its etcd implementation on
// go.etcd.io/etcd/client/v3, configuration in Cilium's form
// (--kvstore etcd --kvstore-opt etcd.config=<file>), the session lease
// that makes an agent's keys vanish when it dies, distributed locks, the
// heartbeat and the status line.
//
// Agents of one cluster share nodes, identities and IP-to-identity entries
// here, and ClusterMesh reads each remote cluster's etcd through the same
// Backend. Package kvstore/store builds the shared, sync and watch stores on
// top; package kvstore/kvstoretest starts a real embedded etcd for tests
// and offers an in-memory Backend with the same semantics.
//
// It may import packages of cells and kvstore, nothing of policy, datapath
// or clustermesh (docs/design.md, Layers).
package kvstore
