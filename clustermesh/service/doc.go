// Package service is the global service engine of ClusterMesh: it decodes
// the ClusterService entries a remote cluster's writers put under
// layout.ServiceKey(cluster, namespace, name) (Cilium's JSON),
// and merges the shared ones of every remote cluster into a cache keyed by
// namespace/name (the global services). The remote connections
// (clustermesh/remote) feed the cache with a ClusterWatcher, this
// cluster's Kubernetes watcher (k8ssvc) with UpsertLocal; the
// clustermesh cell serves its merged view and, through Subscribe and
// RemoteBackends, hands the remote clusters' backends of each global
// service to the service manager (datapath/svcmanager). No cells here.
//
// It may import packages of cells, kvstore, policy, datapath and
// clustermesh, nothing of cmd or hack (docs/design.md, Layers).
package service
