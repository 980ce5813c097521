// Package publish writes what the clusters meshing with this one read
// from its etcd beyond each agent's own keys (docs/design.md, Flow 2:
// remote cluster -> ipcache -> BPF, seen from this side): the cluster
// configuration under layout.ClusterConfigKey and the sync canaries no
// single agent's store writes (identities, services).
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
//
// It may import packages of cells, kvstore, policy, datapath and
// clustermesh, nothing of cmd or hack (docs/design.md, Layers).
package publish
