// Package remote is one remote cluster of a mesh: the controller
// remote-etcd-<cluster> that (re)creates the connection to the remote's
// etcd (TLS from its config file) with backoff, reads and validates the
// remote's layout.ClusterConfigKey, and runs, under a watch store
// manager (sync-canary mode, or immediate mode for remotes without the
// capability), the same watchers the agent runs on its own kvstore —
// nodes, ipcache entries, identities — on the remote's backend with
// source clustermesh. A watchdog restarts the connection when the etcd
// session or heartbeat fails; cached entries are kept while disconnected
// and reconciled (vanished keys deleted) when the new list completes.
// Removing the cluster withdraws everything learned from it.
//
// It may import packages of cells, kvstore, policy, datapath and
// clustermesh, nothing of cmd or hack (docs/design.md, Layers).
package remote
