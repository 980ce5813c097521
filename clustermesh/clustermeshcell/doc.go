// Package clustermeshcell wires the clustermesh engine into the agent:
// the --clustermesh-config and --clustermesh-sync-timeout flags, the
// config directory watcher job, the remote-etcd-<cluster> controllers,
// the "ClusterMesh" status line, GET /v1/cluster/mesh and the
// apiary_clustermesh_* metrics. The endpoint manager asks for
// SyncWaiter to hold the first regeneration until the remotes synced.
//
// It may import packages of cells, kvstore, policy, datapath and
// clustermesh, nothing of cmd or hack (docs/design.md, Layers).
package clustermeshcell
