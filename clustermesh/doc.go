// Package clustermesh meshes this cluster with others through their etcd
// (docs/design.md, Flow 2: remote cluster -> ipcache -> BPF): it
// watches the --clustermesh-config directory (one file per remote
// cluster, named after it, in the etcd config format),
// keeps one remote.Cluster connection per valid file, refuses duplicate
// cluster ids across remotes, and reports the mesh (status line, API,
// metrics). A removed file withdraws everything learned from that
// cluster; stopping the agent withdraws nothing. Package
// clustermesh/clustermeshcell wires it into the agent.
//
// It may import packages of cells, kvstore, policy, datapath and
// clustermesh, nothing of cmd or hack (docs/design.md, Layers).
package clustermesh
