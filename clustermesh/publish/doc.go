// Package publish writes what the clusters meshing with this one read
// from its etcd beyond each agent's own keys (DESIGN.md flow 4, "our own
// side"): the cluster configuration layout.ClusterConfigKey and
// the sync canaries no single agent's store writes (identities,
// services).
//
// Every agent runs a Publisher; one of them at a time holds a kvstore
// lock and writes, with its session lease, so the keys expire with a
// dead agent's lease; the next agent to take the lock binds them to its
// own lease (the config at once, each canary when the old one
// expires). The leader
// also keeps the canaries of the agents' own stores (nodes, ipcache): a
// canary that existed and vanished because the agent that last wrote it
// stopped is written again, so a remote connecting later still finds
// it. The formats are Cilium's (see docs/kvstore.md), so Cilium's
// agents and KVStoreMesh mesh with an apiary cluster.
package publish
